"""Consolidation, pruning and conflict rules (pure functions; the store applies them).

* Consolidation turns a finished turn into a dated ``daily`` entry, and facts the user flagged
  as important ("remember that ...", "important: ...") into ``core`` entries.
* Pruning deletes ``conversation`` and ``daily`` entries older than the retention; ``core`` and
  custom categories are never pruned.
* Two ``core`` entries conflict when the Jaccard overlap of their word sets reaches the
  threshold; the older is then superseded by the newer.
"""

from __future__ import annotations

import hashlib
import re
import time

from .recall import STOP_WORDS, words

__all__ = [
    "PRUNABLE_CATEGORIES",
    "SUPERSEDED_BY",
    "content_hash",
    "daily_key",
    "fact_key",
    "important_facts",
    "jaccard",
    "word_set",
]

PRUNABLE_CATEGORIES = ("conversation", "daily")
SUPERSEDED_BY = "superseded_by"

_FACT = re.compile(
    r"(?:^|[.!?\n]\s*)(?:please\s+)?(?:remember(?:\s+that)?|important|note(?:\s+that)?)\s*[:,]?\s+"
    r"(?P<fact>[^.!?\n]+)",
    re.IGNORECASE,
)


def content_hash(text: str) -> str:
    """SHA-256 of ``text`` (UTF-8), hex: the embedding cache key."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def word_set(text: str) -> frozenset[str]:
    """The distinct non-stop words of ``text``, lowercased."""
    return frozenset(w for w in words(text) if w not in STOP_WORDS)


def jaccard(a: str, b: str) -> float:
    """Word-overlap Jaccard similarity of two texts, 0..1 (0 when either has no words)."""
    sa, sb = word_set(a), word_set(b)
    if not sa or not sb:
        return 0.0
    return len(sa & sb) / len(sa | sb)


def important_facts(user_text: str) -> list[str]:
    """Facts the user flagged: sentences starting "remember (that)", "important:", "note that"."""
    facts = []
    for match in _FACT.finditer(user_text):
        fact = match.group("fact").strip(" ,;:")
        if fact and fact not in facts:
            facts.append(fact)
    return facts


def daily_key(session_id: str, user_text: str, when: float | None = None) -> str:
    """The key of a turn's ``daily`` entry: ``daily/YYYY-MM-DD/<session>/<hash8>``."""
    day = time.strftime("%Y-%m-%d", time.gmtime(time.time() if when is None else when))
    return f"daily/{day}/{session_id}/{content_hash(user_text)[:8]}"


def fact_key(fact: str) -> str:
    """The key of a promoted fact: ``fact/<hash12>`` of its normalised words."""
    return "fact/" + content_hash(" ".join(words(fact)))[:12]

"""Consolidation, pruning and conflict rules (pure functions; the store applies them).

* Consolidation turns a finished turn into a dated ``daily`` entry, and facts the user flagged
  as important ("remember that ...", "important: ...") into ``core`` entries.
* Pruning deletes ``conversation`` and ``daily`` entries and session history messages older
  than the retention; ``core`` and custom categories are never pruned.
* Two ``core`` entries conflict when the Jaccard overlap of their word sets reaches the
  threshold; the older is then superseded by the newer, except that a fact extracted from a
  turn never supersedes a key stored on purpose (explicit keys win).
"""

from __future__ import annotations

import logging
import math
import re
import time
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clawseed_edge.api import MemoryEntry

from .recall import STOP_WORDS, words
from .sessions import prune_session_messages

__all__ = [
    "DAILY_PART_CHARS",
    "EXTRACTED",
    "MAX_FACT_CHARS",
    "PRUNABLE_CATEGORIES",
    "SUPERSEDED_BY",
    "HygieneMethods",
    "cap_text",
    "conflict_search_words",
    "content_hash",
    "daily_key",
    "fact_key",
    "important_facts",
    "jaccard",
    "word_set",
]

log = logging.getLogger(__name__)

PRUNABLE_CATEGORIES = ("conversation", "daily")
#: Characters of the user's text, and of the answer, kept in a turn's ``daily`` entry. It is a
#: summary for recall, not a transcript (the session history holds the turn).
DAILY_PART_CHARS = 1000
#: A flagged fact longer than this is not promoted: a fact is a sentence, not a paste.
MAX_FACT_CHARS = 1000
SUPERSEDED_BY = "superseded_by"
#: ``metadata["source"]`` of a fact extracted from a turn: it never supersedes a key the user
#: (or the model, through ``memory_store``) stored on purpose.
EXTRACTED = "consolidation"

_FACT = re.compile(
    r"(?:^|[.!?\n]\s*)(?:please\s+)?(?P<marker>remember|important|note)"
    r"(?P<intro>\s+that\b|\s*:)?\s*,?\s+(?P<fact>[^.!?\n]+)(?=(?P<end>[.!?\n]?))",
    re.IGNORECASE,
)
# A bare "remember X" is a statement only if X says something about its subject; "remember
# the fan pin" is a request to look something up, and "remember to ..." is a reminder.
_STATEMENT_WORDS = frozenset(
    "is are was were am be been being has have had uses use runs run needs need likes like "
    "prefers prefer lives live works work means mean goes go leaks leak sits stays contains "
    "equals controls drives connects belongs should must will can could would does do".split()
)


def _is_statement(fact: str) -> bool:
    tokens = fact.lower().replace("'s ", " is ").split()
    if not tokens or tokens[0] == "to":
        return False
    return "=" in fact or any(t.strip(",;:") in _STATEMENT_WORDS for t in tokens[1:])


def cap_text(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying how many were left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]} … [{len(text) - limit} more characters not kept]"


def content_hash(text: str) -> str:
    """SHA-256 of ``text`` (UTF-8), hex: the embedding cache key."""
    import hashlib  # at the first store, not at start-up (a cached import after that)

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


def conflict_search_words(text: str, threshold: float) -> list[str]:
    """Words of ``text`` that any fact overlapping it by ``threshold`` or more must contain
    at least one of: the search for conflict candidates needs only these.

    A fact B with Jaccard(A, B) >= t shares at least m = ceil(t * |A|) of A's words, so it
    misses at most |A| - m of them and contains one of ANY |A| - m + 1 words of A. The
    longest words are chosen (long words tend to be rare: "gpio23" before "fan"), so a word
    that every fact has ("pin") does not make every fact a candidate. FTS matching (stems,
    diacritics) only widens the search, so no real conflict is missed.
    """
    found = sorted(word_set(text), key=lambda w: (-len(w), w))
    need = math.ceil(threshold * len(found) - 1e-9)
    if need <= 0:
        return found  # every fact overlaps "enough": search them all
    return found[: len(found) - need + 1]


def important_facts(user_text: str) -> list[str]:
    """Facts the user stated as worth keeping, in order, without duplicates.

    "remember that X", "remember: X", "note that X" and "important: X" introduce a statement
    X; a bare "remember X" / "note X" counts only when X reads as a statement ("remember the
    fan is on GPIO23", not "remember the fan pin"). Questions are never facts.
    """
    facts = []
    for match in _FACT.finditer(user_text):
        fact = match.group("fact").strip(" ,;:")
        if not fact or match.group("end") == "?" or fact in facts:
            continue
        if match.group("intro") is None and not _is_statement(fact):
            continue
        facts.append(fact)
    return facts


def daily_key(session_id: str, user_text: str, when: float | None = None) -> str:
    """The key of a turn's ``daily`` entry: ``daily/YYYY-MM-DD/<session>/<hash8>``."""
    day = time.strftime("%Y-%m-%d", time.gmtime(time.time() if when is None else when))
    return f"daily/{day}/{session_id}/{content_hash(user_text)[:8]}"


def fact_key(fact: str) -> str:
    """The key of a promoted fact: ``fact/<hash12>`` of its normalised words."""
    return "fact/" + content_hash(" ".join(words(fact)))[:12]


class HygieneMethods:
    """Consolidation and pruning for SqliteMemory (uses its store and transactions)."""

    if TYPE_CHECKING:
        snapshot_path: Path | None
        vectors_loaded: bool
        _last_prune: float | None
        _vec_table: bool

        def _read(self, what: str) -> AbstractAsyncContextManager[Any]: ...

        def _write(self, what: str) -> AbstractAsyncContextManager[Any]: ...

        async def store_many(self, entries: Sequence[MemoryEntry]) -> list[MemoryEntry]: ...

        async def export_snapshot(
            self, path: str | Path | None = None, *, namespace: str | None = None
        ) -> Path: ...

    async def consolidate(
        self,
        session_id: str,
        user_text: str,
        answer_text: str,
        *,
        namespace: str = "default",
        important: Sequence[str] = (),
    ) -> list[MemoryEntry]:
        """Record a finished turn: a dated ``daily`` entry, and flagged facts as ``core``.

        Facts are ``important`` plus the statements of ``user_text`` flagged "remember
        (that)", "important:" or "note that" (see :func:`important_facts`); facts over
        ``MAX_FACT_CHARS`` are skipped (logged). The daily entry keeps at most
        ``DAILY_PART_CHARS`` of the user's text and of the answer, marking what was cut.
        All are stored in one transaction (one embedding batch). Returns the stored
        entries, the daily one first.
        """
        # a lone surrogate (a broken paste) cannot be stored: "?" instead
        user_text = user_text.encode("utf-8", "replace").decode("utf-8")
        answer_text = answer_text.encode("utf-8", "replace").decode("utf-8")
        user_part = cap_text(user_text.strip(), DAILY_PART_CHARS)
        answer_part = cap_text(answer_text.strip(), DAILY_PART_CHARS)
        daily = MemoryEntry(
            key=daily_key(session_id, user_text),
            content=f"User: {user_part}\nAssistant: {answer_part}",
            category="daily",
            namespace=namespace,
            session_id=session_id,
            importance=0.3,
        )
        facts = []
        for fact in dict.fromkeys([*important, *important_facts(user_text)]):
            if len(fact) > MAX_FACT_CHARS:
                log.warning(
                    "memory: a flagged fact of %d characters was not promoted (limit %d)",
                    len(fact),
                    MAX_FACT_CHARS,
                )
                continue
            facts.append(fact)
        cores = [
            MemoryEntry(
                key=fact_key(fact),
                content=fact,
                category="core",
                namespace=namespace,
                session_id=session_id,
                importance=0.9,
                metadata={"source": EXTRACTED},
            )
            for fact in facts
        ]
        return await self.store_many([daily, *cores])

    async def prune(
        self, retention_days: float, *, now: float | None = None, namespace: str | None = None
    ) -> int:
        """Delete ``conversation``/``daily`` entries not updated for ``retention_days``, and
        session history messages older than that (a session left empty goes too).

        ``core`` and custom categories are never pruned. History is pruned in every
        namespace (sessions have none). Returns how many entries were deleted.
        """
        cutoff = (time.time() if now is None else now) - retention_days * 86400.0
        marks = ",".join("?" * len(PRUNABLE_CATEGORIES))
        sql = f"SELECT id FROM entries WHERE category IN ({marks}) AND updated_at < ?"
        params: list[Any] = [*PRUNABLE_CATEGORIES, cutoff]
        if namespace is not None:
            sql += " AND namespace = ?"
            params.append(namespace)
        async with self._write("prune") as conn:
            ids = [(int(r[0]),) for r in await conn.execute_fetchall(sql, params)]
            await conn.executemany("DELETE FROM entries WHERE id=?", ids)
            if self._vec_table and self.vectors_loaded:
                await conn.executemany("DELETE FROM entries_vec WHERE rowid=?", ids)
            messages = await prune_session_messages(conn, cutoff)
            await conn.execute(
                "INSERT OR REPLACE INTO memory_meta (key, value) VALUES ('last_prune', ?)",
                (str(time.time() if now is None else now),),
            )
        self._last_prune = time.time() if now is None else now
        if messages:
            log.info(
                "memory: pruned %d session messages older than %g days", messages, retention_days
            )
        return len(ids)

    async def prune_if_due(
        self, retention_days: float, *, interval_s: float = 86400.0, now: float | None = None
    ) -> int | None:
        """Run :meth:`prune` if it last ran more than ``interval_s`` ago; None if not due.

        Call it after turns; it also rewrites the snapshot, if one is configured. The time of
        the last prune is read from the database once, then kept: a turn that is not due
        makes no trip to the database (another process's prune is seen at the next start).
        """
        current = time.time() if now is None else now
        if self._last_prune is None:
            async with self._read("prune schedule") as conn:
                rows = await conn.execute_fetchall(
                    "SELECT value FROM memory_meta WHERE key = 'last_prune'"
                )
            self._last_prune = float(rows[0][0]) if rows else float("-inf")
        if current - self._last_prune < interval_s:
            return None
        pruned = await self.prune(retention_days, now=current)
        if self.snapshot_path is not None:
            await self.export_snapshot()
        return pruned

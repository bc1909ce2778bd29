"""Hybrid recall scoring: FTS5 query sanitising, score normalisation and the weighted merge.

Pure functions, no I/O, so ranking can be tested without a database.

Scores:
    * keyword: FTS5 ``bm25()`` is negative, lower is better. Each hit's score is its BM25
      magnitude divided by the best hit's, so the best keyword match is 1.0.
    * vector: sqlite-vec cosine distance ``d`` in [0, 2] becomes similarity ``1 - d``,
      clamped to [0, 1].
    * hybrid: ``vector_weight * vector + keyword_weight * keyword`` with the weights scaled to
      sum to 1; an entry missing from one side scores 0 there.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

import msgspec

__all__ = [
    "STOP_WORDS",
    "Scored",
    "fts_match_expression",
    "keyword_scores",
    "merge_scores",
    "vector_scores",
    "words",
]

_WORD = re.compile(r"\w+", re.UNICODE)

STOP_WORDS = frozenset(
    "a an and are as at be by did do does for from has have how i in is it its me my of on or "
    "our so that the their them then there these this to was we were what when where which who "
    "why will with you your".split()
)


def words(text: str) -> list[str]:
    """The lowercase word tokens of ``text`` (letters, digits, underscore; any script)."""
    return [w.lower() for w in _WORD.findall(text)]


def fts_match_expression(text: str, *, max_terms: int = 32) -> str | None:
    """A safe FTS5 MATCH expression for arbitrary user text, or None if it has no words.

    Every word becomes a quoted string (so ``AND``, ``NEAR``, ``-``, ``:``, ``*``, quotes and
    column filters in user text are plain words, never syntax) and the terms are OR-ed, so an
    entry matching any word is found and BM25 ranks entries matching more words higher.
    Stop words are dropped unless nothing else is left.
    """
    tokens = words(text)
    if not tokens:
        return None
    kept = [t for t in tokens if t not in STOP_WORDS] or tokens
    unique = list(dict.fromkeys(kept))[:max_terms]
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in unique)


def keyword_scores(rows: Iterable[tuple[int, float]]) -> dict[int, float]:
    """Normalise ``(rowid, bm25)`` pairs to (0, 1], the best hit scoring 1.0."""
    raw = {rowid: -float(bm) for rowid, bm in rows}
    best = max(raw.values(), default=0.0)
    if best <= 0.0:
        # All hits tie at zero magnitude (tiny corpora): they all match, equally.
        return dict.fromkeys(raw, 1.0)
    return {rowid: max(value, 0.0) / best for rowid, value in raw.items()}


def vector_scores(rows: Iterable[tuple[int, float]]) -> dict[int, float]:
    """Turn ``(rowid, cosine distance)`` pairs into similarities in [0, 1]."""
    return {rowid: min(1.0, max(0.0, 1.0 - float(d))) for rowid, d in rows}


class Scored(msgspec.Struct, frozen=True):
    """One candidate's merged score and its two parts."""

    rowid: int
    score: float
    keyword: float
    vector: float


def merge_scores(
    keyword: Mapping[int, float],
    vector: Mapping[int, float],
    *,
    keyword_weight: float,
    vector_weight: float,
    min_relevance: float,
) -> list[Scored]:
    """Merge both sides into one list, best first, dropping scores below ``min_relevance``.

    A side with weight 0 is ignored; if both weights are 0 the keyword side is used.
    Ties are broken by rowid, newest first.
    """
    total = keyword_weight + vector_weight
    if total <= 0:
        keyword_weight, vector_weight, total = 1.0, 0.0, 1.0
    kw, vw = keyword_weight / total, vector_weight / total
    out: list[Scored] = []
    for rowid in set(keyword) | set(vector):
        k = keyword.get(rowid, 0.0)
        v = vector.get(rowid, 0.0)
        score = kw * k + vw * v
        if score >= min_relevance and score > 0.0:
            out.append(Scored(rowid, score, k, v))
    out.sort(key=lambda s: (-s.score, -s.rowid))
    return out

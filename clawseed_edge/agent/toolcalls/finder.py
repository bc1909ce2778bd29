"""A cached forward search, so that a scan finding closing tags stays linear in its text."""

from __future__ import annotations

import re

__all__ = ["Finder"]


class Finder:
    """Finds the next match of a pattern at or after a position, in amortised linear time.

    A search is reused while the caller's position has not passed the match it found (or
    when it found nothing), so repeated openers without a closer cost one scan in total.
    """

    __slots__ = ("_from", "_match", "_pattern", "_text")

    def __init__(self, text: str, pattern: re.Pattern[str]) -> None:
        self._text = text
        self._pattern = pattern
        self._from = -1
        self._match: re.Match[str] | None = None

    def find(self, pos: int) -> re.Match[str] | None:
        m = self._match
        if 0 <= self._from <= pos and (m is None or m.start() >= pos):
            return m
        self._match = self._pattern.search(self._text, pos)
        self._from = pos
        return self._match

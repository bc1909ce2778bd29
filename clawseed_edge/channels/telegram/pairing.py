"""The one-time code of ``/pair <code>`` (:class:`PairCode`): short-lived, ended by wrong codes.

``clawseed-edge pair --telegram`` asks the running service for a fresh code; a stranger who
sends it becomes an allowed user (kept in the host's pairing store by the channel).
"""

from __future__ import annotations

import logging
import secrets
import time

__all__ = ["PAIR_CODE_MAX_FAILURES", "PAIR_CODE_TTL_S", "PairCode"]

log = logging.getLogger(__name__)

#: How long a ``/pair`` code works, and how many wrong codes end it.
PAIR_CODE_TTL_S = 600.0
PAIR_CODE_MAX_FAILURES = 10


class PairCode:
    """At most one live code: 8 digits, for ``PAIR_CODE_TTL_S``, used once."""

    def __init__(self) -> None:
        self._code: str | None = None
        self._born = 0.0
        self._failures = 0

    def new(self) -> str:
        """A fresh code (the previous one stops working)."""
        self._code = f"{secrets.randbelow(100_000_000):08d}"
        self._born = time.monotonic()
        self._failures = 0
        return self._code

    def take(self, given: str) -> bool:
        """Whether ``given`` is the live code; a right code is used up, too many wrong ones
        end it."""
        code = self._code
        if code is not None and time.monotonic() - self._born >= PAIR_CODE_TTL_S:
            code = self._code = None
        if code is None or not secrets.compare_digest(given.encode(), code.encode()):
            if code is not None:
                self._failures += 1
                if self._failures >= PAIR_CODE_MAX_FAILURES:
                    self._code = None
                    log.warning("Telegram: the pairing code ended after too many wrong codes")
            return False
        self._code = None
        return True

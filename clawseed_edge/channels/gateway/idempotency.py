"""Webhook de-duplication: the same ``X-Idempotency-Key`` within the window gets the same answer.

A second request with a key whose first request is still running waits for it instead of
starting a second turn.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

__all__ = ["IdempotencyCache"]


class IdempotencyCache:
    """Answers by key for ``ttl_s`` seconds, at most ``max_keys`` of them (oldest dropped)."""

    def __init__(
        self,
        ttl_s: float = 300.0,
        *,
        max_keys: int = 1024,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.ttl_s = ttl_s
        self._max = max_keys
        self._clock = clock
        self._entries: OrderedDict[str, tuple[float, asyncio.Future[Any]]] = OrderedDict()

    async def run(self, key: str, make: Callable[[], Awaitable[Any]]) -> tuple[Any, bool]:
        """``(answer, replayed)``: the stored answer for ``key``, or ``make()``'s.

        A failed ``make`` is not stored (the client may retry). Cancel-safe for the caller
        that started the work only in that the work is cancelled with it and not stored.
        """
        now = self._clock()
        for old, (expires, _) in list(self._entries.items()):
            if expires > now:
                break
            del self._entries[old]
        entry = self._entries.get(key)
        if entry is not None:
            return await asyncio.shield(entry[1]), True
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._entries[key] = (now + self.ttl_s, fut)
        while len(self._entries) > self._max:
            self._entries.popitem(last=False)
        try:
            answer = await make()
        except BaseException as exc:
            self._entries.pop(key, None)
            if not fut.done():
                fut.set_exception(exc if isinstance(exc, Exception) else RuntimeError("cancelled"))
                fut.exception()  # retrieved: waiting duplicates re-raise it, nobody else
            raise
        fut.set_result(answer)
        return answer, False

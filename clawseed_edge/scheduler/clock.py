"""The scheduler's clock: Unix seconds and a wake-up; :class:`ManualClock` for tests.

The real clock sleeps at most :data:`MAX_SLEEP_S` at a time and looks at the wall clock again,
so a clock set late (a Pi without a battery-backed clock syncs NTP after boot) or moved by the
user is noticed within a minute.
"""

from __future__ import annotations

import asyncio
import time
from typing import Protocol

__all__ = ["Clock", "ManualClock", "SystemClock"]

#: The longest single sleep of the real clock, in seconds.
MAX_SLEEP_S = 60.0


class Clock(Protocol):
    """Unix seconds and a way to wait until one."""

    def now(self) -> float: ...

    async def sleep_until(self, when: float) -> None:
        """Return at ``when`` or a little earlier (the caller looks at ``now()`` again)."""
        ...


class SystemClock:
    """The wall clock (``time.time``), asyncio sleeps."""

    def now(self) -> float:
        return time.time()

    async def sleep_until(self, when: float) -> None:
        """Sleep until ``when`` (at most :data:`MAX_SLEEP_S` at once). Cancel-safe."""
        await asyncio.sleep(min(max(0.0, when - time.time()), MAX_SLEEP_S))


class ManualClock:
    """A clock that moves only when told: ``clock.set(t)`` / ``await clock.advance(s)``.

    Sleepers wake when the time reaches their deadline; nothing waits for real time.
    """

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        self._sleepers: list[tuple[float, asyncio.Future[None]]] = []
        self._arrived: asyncio.Event | None = None

    def now(self) -> float:
        return self._now

    async def sleep_until(self, when: float) -> None:
        if when <= self._now:
            await asyncio.sleep(0)
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._sleepers.append((when, future))
        if self._arrived is not None:
            self._arrived.set()
        try:
            await future
        finally:
            self._sleepers = [(w, f) for w, f in self._sleepers if f is not future]

    def set(self, when: float) -> None:
        """Move the time to ``when`` and wake every sleeper whose deadline has come."""
        self._now = when
        for deadline, future in list(self._sleepers):
            if deadline <= when and not future.done():
                future.set_result(None)

    async def advance(self, seconds: float) -> None:
        """Move the time forward and let the woken tasks take a step."""
        self.set(self._now + seconds)
        await asyncio.sleep(0)

    async def wait_sleeping(self) -> None:
        """Wait until a task sleeps on this clock (e.g. the scheduler's loop, between passes)."""
        if self._arrived is None:
            self._arrived = asyncio.Event()
        while not self.sleepers:
            self._arrived.clear()
            await self._arrived.wait()

    @property
    def deadlines(self) -> list[float]:
        """When the tasks sleeping on this clock wake, earliest first."""
        return sorted(w for w, f in self._sleepers if not f.done())

    @property
    def sleepers(self) -> int:
        """How many tasks are waiting on this clock."""
        return sum(1 for _, f in self._sleepers if not f.done())

"""RefreshSchedule: one schedule that asks the peripherals for fresh readings, for every channel.

Sensors and inputs without edges publish only when asked (``StateSource.refresh``); what comes
back flows through the state feeds to every subscriber. Channels that want fresh readings
(the web app's live dashboard every few seconds, Home Assistant's sensor states every minute)
do not poll on their own clocks: each says how often it wants them (:meth:`RefreshSchedule.want`)
and the one task refreshes at the shortest interval anyone wants, while anyone does.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Callable, Sequence

from clawseed_edge.api import Peripheral, StateSource

__all__ = ["REFRESH_TIMEOUT_S", "RefreshSchedule"]

log = logging.getLogger(__name__)

#: Seconds one peripheral's refresh may take before it counts as failed.
REFRESH_TIMEOUT_S = 10.0

#: Told ``"<peripheral>: <what failed>"`` when a refresh fails.
FailureListener = Callable[[str], None]


class RefreshSchedule:
    """Refreshes every state source at the shortest wanted interval; see the module docstring.

    Args:
        peripherals: The service's peripherals (those with a ``states`` feed are refreshed).
        timeout_s: Bound of each peripheral's refresh, seconds.
    """

    def __init__(
        self, peripherals: Sequence[Peripheral], *, timeout_s: float = REFRESH_TIMEOUT_S
    ) -> None:
        self._sources = [p for p in peripherals if isinstance(p, StateSource)]
        self.timeout_s = timeout_s
        self._wants: dict[int, tuple[float, FailureListener | None]] = {}
        self._keys = itertools.count(1)
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        #: How many refresh rounds ran (status, tests).
        self.rounds = 0

    def want(self, every_s: float, on_failure: FailureListener | None = None) -> Callable[[], None]:
        """Refresh at least every ``every_s`` seconds (the first round at once) until the
        returned function is called; ``on_failure`` hears of each failed refresh."""
        if not every_s > 0:
            raise ValueError(f"every_s must be a positive number of seconds, got {every_s}")
        key = next(self._keys)
        self._wants[key] = (every_s, on_failure)
        self._wake.set()
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run(), name="refresh")

        def release() -> None:
            if self._wants.pop(key, None) is not None:
                self._wake.set()  # a longer interval now, or none: the loop ends

        return release

    @property
    def interval_s(self) -> float | None:
        """The shortest wanted interval (None: nobody wants refreshes)."""
        return min((every for every, _ in self._wants.values()), default=None)

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def poke(self) -> None:
        """Refresh now (something may have changed that publishes no state of its own)."""
        self._wake.set()

    async def aclose(self) -> None:
        """Stop refreshing. Idempotent; safe to cancel."""
        self._wants.clear()
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(BaseException):
                await task

    async def _run(self) -> None:
        while (interval := self.interval_s) is not None:
            # Cleared before the work: a poke (or a new want) meanwhile counts.
            self._wake.clear()
            await self._refresh_all()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(interval):
                    await self._wake.wait()

    async def _refresh_all(self) -> None:
        self.rounds += 1
        for src in self._sources:
            try:
                async with asyncio.timeout(self.timeout_s):
                    await src.refresh()
            except Exception as exc:
                # A bug or a dead bus in one source must not stop the others' readings.
                detail = " ".join(str(exc).split())[:200] or type(exc).__name__
                self._failed(f"{src.name}: {detail}")

    def _failed(self, detail: str) -> None:
        log.debug("refreshing failed: %s", detail)
        for _, listener in list(self._wants.values()):
            if listener is not None:
                try:
                    listener(detail)
                except Exception:
                    log.exception("a refresh failure listener failed")

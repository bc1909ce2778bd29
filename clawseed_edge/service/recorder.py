"""``SensorRecorder``: the service's sampler, its history database and their upkeep, as one part.

Started when a sensor bank has a sensor with an ``update_interval``: opens
``$CLAWSEED_HOME/history.db`` (unless ``[history] enabled = false``), starts the
:class:`~.sampler.SensorSampler`, flushes the batch of new values every ``flush_s`` seconds and
prunes each resolution once an hour, and gives the agent the ``sensor_history`` tool. Stopped
in reverse: the sampler, then a last flush, then the file.

The flush has no timer of its own: every value comes from a sampler pass, so the first pass
after ``flush_s`` starts it, in the wake-up the loop already had (one less a flush).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from clawseed_edge.config.schema import HistorySettings
    from clawseed_edge.peripherals.sensors.bank import SensorBank
    from clawseed_edge.state import SensorHistory

    from .sampler import SensorSampler

from .inputs import find_sensor_bank

__all__ = ["HISTORY_FILE", "SensorRecorder", "find_sensor_bank"]

log = logging.getLogger(__name__)

HISTORY_FILE = "history.db"
PRUNE_EVERY_S = 3600.0


class SensorRecorder:
    """The sampler, the history and the upkeep task; :meth:`start`, then :meth:`aclose`."""

    def __init__(
        self,
        bank: SensorBank,
        home: Path,
        settings: HistorySettings,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.bank = bank
        self.home = home
        self.settings = settings
        self.clock = clock
        self.history: SensorHistory | None = None
        self.sampler: SensorSampler | None = None
        self._upkeep: asyncio.Task[None] | None = None
        self._flush_at = 0.0
        self._pruned_at = -PRUNE_EVERY_S  # the first flush prunes too

    async def start(self) -> None:
        """Open the history (if on) and start sampling. Raises StateError for a bad file."""
        from clawseed_edge.state import SensorHistory

        if self.settings.enabled:
            self.history = await SensorHistory.open(
                self.home / HISTORY_FILE, retention=self.settings.retention(), clock=self.clock
            )
        from .sampler import SensorSampler  # with a sensor to sample only

        on_pass = self._after_pass if self.history is not None else None
        self.sampler = SensorSampler(self.bank, self.history, clock=self.clock, on_pass=on_pass)
        self._flush_at = time.monotonic() + self.settings.flush_s
        self.sampler.start()

    def _after_pass(self) -> None:
        """After each sampler pass: start a flush when one is due and none is running."""
        busy = self._upkeep is not None and not self._upkeep.done()
        if busy or self.history is None or time.monotonic() < self._flush_at:
            return
        self._flush_at = time.monotonic() + self.settings.flush_s
        self._upkeep = asyncio.create_task(self._write(self.history), name="history-flush")

    async def _write(self, history: SensorHistory) -> None:
        try:
            await history.flush()
            if time.monotonic() - self._pruned_at >= PRUNE_EVERY_S:
                self._pruned_at = time.monotonic()
                await history.prune()
        except Exception:  # a full disk: keep sampling, try again at the next flush
            log.exception("writing the sensor history failed")

    def tools(self) -> list[Any]:
        """``sensor_history`` when the history is on."""
        if self.history is None:
            return []
        from clawseed_edge.tools.sensor_history import SensorHistoryTool

        return [SensorHistoryTool(self.history, clock=self.clock)]

    def status(self) -> dict[str, Any]:
        return {
            "history": str(self.history.path) if self.history is not None else None,
            "sampled": self.sampler.status() if self.sampler is not None else [],
        }

    async def aclose(self) -> None:
        """Stop sampling, write what is pending, close the file. Idempotent."""
        if self.sampler is not None:
            await self.sampler.aclose()
        task, self._upkeep = self._upkeep, None
        if task is not None:  # a flush under way completes (the last one follows)
            await asyncio.gather(task, return_exceptions=True)
        if self.history is not None:
            await self.history.aclose()

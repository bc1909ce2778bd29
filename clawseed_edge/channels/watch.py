"""HardwareWatch: live device states, sensor readings and board health for every channel.

While at least one listener asked for it (the gateway's ``GET /sse?hardware=1``), the watch is
subscribed to every peripheral's state feed (:class:`~clawseed_edge.api.StateFeed`): a device
that changes is published at once as a ``devices`` frame (the whole list, so a client needs no
merging), a sensor reading as a ``sensor`` frame. Every ``refresh_s`` it asks the peripherals to
refresh (sensors are read, inputs without edges polled; the answers come back through the same
feeds) and publishes each peripheral's health as ``boards`` when it changed. A new listener
gets a full snapshot at once. The refreshes are the channels' one
:class:`~.refresh.RefreshSchedule` (the watch says how often it wants them while anyone
listens); it never polls on a clock of its own.

Nothing here calls a model's tool, reads a tool's schema or passes the hook pipeline: a read is
not an action the SecurityPolicy governs, and a watch through the tools would count as a
model's tool call in ``/metrics`` and the action ledger.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from clawseed_edge.api import (
    DeviceState,
    Peripheral,
    SensorReading,
    StateSource,
    StateUpdate,
)

from .refresh import RefreshSchedule

__all__ = ["HardwareWatch", "board_health", "sensor_frame"]

log = logging.getLogger(__name__)

#: Seconds one refresh or health check may take before it counts as failed.
READ_TIMEOUT_S = 2.0


def _clip(value: object, limit: int) -> str:
    """``value`` as one line of at most ``limit`` characters (an exception's text)."""
    line = " ".join(str(value).split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


class HardwareWatch:
    """Publishes hardware state while someone listens; see the module docstring.

    Args:
        peripherals: The service's peripherals (those with a ``states`` feed are watched).
        publish: Sends one frame to every listener that asked for hardware frames.
        refresh_s: Seconds between refreshes (sensor reads) and board health checks.
        schedule: The one refresh schedule shared by the channels (default: one of its own,
            for a watch used alone).
    """

    def __init__(
        self,
        peripherals: Sequence[Peripheral],
        publish: Callable[[dict[str, Any]], None],
        *,
        refresh_s: float = 5.0,
        schedule: RefreshSchedule | None = None,
    ) -> None:
        self._peripherals = list(peripherals)
        self._sources = [p for p in peripherals if isinstance(p, StateSource)]
        self._publish = publish
        self.refresh_s = refresh_s
        self.schedule = schedule if schedule is not None else RefreshSchedule(peripherals)
        self._release: Callable[[], None] | None = None
        self._listeners = 0
        self._task: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self._full = True
        self._unsubscribe: list[Callable[[], None]] = []
        self._devices_due = False
        self._last_boards: Any = None

    # --- listeners ------------------------------------------------------------------------

    def listener_added(self) -> None:
        """A listener connected: it gets a full snapshot now; the watch runs while any listen."""
        self._listeners += 1
        self._full = True
        self._wake.set()
        if not self._unsubscribe:
            self._unsubscribe = [s.states.subscribe(self._on_update) for s in self._sources]
        if self._release is None:
            self._release = self.schedule.want(self.refresh_s, self._refresh_failed)
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._run(), name="hardware-watch")

    def listener_removed(self) -> None:
        self._listeners = max(0, self._listeners - 1)
        if self._listeners == 0:
            self._stop_listening()
            self._wake.set()  # the loop sees no listener and ends

    @property
    def listeners(self) -> int:
        """How many listeners asked for hardware frames."""
        return self._listeners

    @property
    def running(self) -> bool:
        """Whether the watch task runs (it refreshes the hardware only then)."""
        return self._task is not None and not self._task.done()

    def poke(self) -> None:
        """Refresh now (something may have changed that publishes no state of its own)."""
        self.schedule.poke()
        self._wake.set()

    async def aclose(self) -> None:
        """Stop the watch task and unsubscribe. Idempotent; safe to cancel."""
        self._listeners = 0
        self._stop_listening()
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(BaseException):
                await task

    def _stop_listening(self) -> None:
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe = []
        release, self._release = self._release, None
        if release is not None:
            release()

    # --- what the feeds send --------------------------------------------------------------

    def _on_update(self, update: StateUpdate) -> None:
        if isinstance(update, SensorReading):
            self._publish(sensor_frame(update))
        elif isinstance(update, DeviceState) and not self._devices_due:
            # One frame for a burst (an estop makes every output safe at once).
            self._devices_due = True
            asyncio.get_running_loop().call_soon(self._devices_frame)

    def _devices_frame(self) -> None:
        self._devices_due = False
        if self._listeners == 0:
            return
        devices = [s.as_dict() for src in self._sources for s in src.states.devices()]
        self._publish({"type": "devices", "ok": True, "time": time.time(), "devices": devices})

    # --- the loop -------------------------------------------------------------------------

    async def _run(self) -> None:
        while self._listeners > 0:
            # Cleared before the work: a poke (or the last listener leaving) meanwhile counts.
            self._wake.clear()
            full, self._full = self._full, False
            try:
                if full:
                    self._snapshot()
                await self._boards(force=full)
            except Exception:  # a bug in one read must not end the stream for everyone
                log.exception("the hardware watch failed; trying again")
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.refresh_s):
                    await self._wake.wait()

    def _snapshot(self) -> None:
        self._devices_frame()
        for src in self._sources:
            for reading in src.states.readings():
                self._publish(sensor_frame(reading))

    def _refresh_failed(self, detail: str) -> None:
        self._publish({"type": "devices", "ok": False, "time": time.time(), "error": detail})

    async def _boards(self, *, force: bool) -> None:
        boards = [await board_health(p) for p in self._peripherals]
        if force or boards != self._last_boards:
            self._last_boards = boards
            self._publish({"type": "boards", "boards": boards, "time": time.time()})


def sensor_frame(reading: SensorReading) -> dict[str, Any]:
    """The ``sensor`` frame of a reading (or of a failed read)."""
    frame: dict[str, Any] = {
        "type": "sensor",
        "sensor": reading.sensor,
        "ok": reading.ok,
        "time": reading.time,
    }
    if reading.ok:
        frame["reading"] = reading.as_dict()
    else:
        frame["error"] = reading.error
    return frame


async def board_health(p: Peripheral) -> dict[str, Any]:
    """``name``, ``board_type``, ``healthy`` and ``detail`` of one peripheral, bounded in time."""
    try:
        async with asyncio.timeout(READ_TIMEOUT_S):
            health = await p.health_check()
        healthy, detail = health.healthy, health.detail
    except Exception as exc:
        healthy, detail = False, _clip(exc, 200) or type(exc).__name__
    return {"name": p.name, "board_type": p.board_type, "healthy": healthy, "detail": detail}

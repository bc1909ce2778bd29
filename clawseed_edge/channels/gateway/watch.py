"""DeviceWatch: live device states, sensor readings and board health for the ``/sse`` stream.

While at least one SSE listener asked for it (``GET /sse?hardware=1``), the watch reads every device (the
``hardware_status`` tool) each ``interval_s`` and publishes ``devices`` when a value changed;
every ``slow_every`` ticks it reads each sensor (``sensor_read``, published as ``sensor``) and
each peripheral's health (``boards``, on change). A new listener gets a full snapshot at once,
and :meth:`DeviceWatch.poke` reads again now (after a dashboard action or an estop).

Only tools of risk class ``read`` are run, and they are run directly rather than through the
hook pipeline: a read is not an action the SecurityPolicy governs, and a poll through the
hooks would count as a model's tool call in ``/metrics`` and the action ledger once a second.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from clawseed_edge.api import Peripheral, RiskClass, Tool, ToolContext

from .limits import clip

__all__ = ["DeviceWatch"]

log = logging.getLogger(__name__)

#: Seconds one read (a tool, a health check) may take before it counts as failed.
READ_TIMEOUT_S = 2.0


class DeviceWatch:
    """Publishes hardware state while someone listens; see the module docstring.

    Args:
        tool: Looks a tool up by name (the service agent's registry).
        peripherals: Whose health is published as ``boards``.
        publish: Sends one frame to every SSE listener that asked for hardware frames.
        interval_s: Seconds between device reads.
        slow_every: Sensors and board health are read every this many device reads.
    """

    def __init__(
        self,
        tool: Callable[[str], Tool | None],
        peripherals: Sequence[Peripheral],
        publish: Callable[[dict[str, Any]], None],
        *,
        interval_s: float = 1.0,
        slow_every: int = 5,
    ) -> None:
        self._tool = tool
        self._peripherals = peripherals
        self._publish = publish
        self.interval_s = interval_s
        self.slow_every = max(1, slow_every)
        self._listeners = 0
        self._task: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self._full = True
        self._last_devices: Any = None
        self._last_boards: Any = None
        self._context = ToolContext(session_id="gateway-watch", channel="gateway")

    # --- listeners ------------------------------------------------------------------------

    def listener_added(self) -> None:
        """A listener connected: it gets a full snapshot now; the watch runs while any listen."""
        self._listeners += 1
        self._full = True
        self._wake.set()
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._run(), name="gateway-device-watch")

    def listener_removed(self) -> None:
        self._listeners = max(0, self._listeners - 1)
        if self._listeners == 0:
            self._wake.set()  # the loop sees no listener and ends

    @property
    def listeners(self) -> int:
        """How many listeners asked for hardware frames."""
        return self._listeners

    @property
    def running(self) -> bool:
        """Whether the watch task runs (it reads the hardware only then)."""
        return self._task is not None and not self._task.done()

    def poke(self) -> None:
        """Read devices again now (something may just have switched)."""
        self._wake.set()

    async def aclose(self) -> None:
        """Stop the watch task. Idempotent; safe to cancel."""
        self._listeners = 0
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(BaseException):
                await task

    # --- the loop -------------------------------------------------------------------------

    async def _run(self) -> None:
        tick = 0
        while self._listeners > 0:
            full, self._full = self._full, False
            try:
                await self._devices(force=full)
                if full or tick % self.slow_every == 0:
                    await self._boards(force=full)
                    await self._sensors()
            except Exception:  # a bug in one read must not end the stream for everyone
                log.exception("the device watch failed to read; trying again")
            tick += 1
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.interval_s):
                    await self._wake.wait()

    async def _read(self, name: str, arguments: dict[str, Any]) -> tuple[bool, Any, str]:
        tool = self._tool(name)
        if tool is None or getattr(tool, "risk", None) is not RiskClass.READ:
            return False, None, "missing"
        try:
            async with asyncio.timeout(READ_TIMEOUT_S):
                result = await tool.execute(arguments, self._context)
        except TimeoutError:
            return False, None, f"{name} did not answer within {READ_TIMEOUT_S:g} s"
        except Exception as exc:
            return False, None, clip(exc, 200) or type(exc).__name__
        return result.success, result.data, result.error or ""

    async def _devices(self, *, force: bool) -> None:
        ok, data, error = await self._read("hardware_status", {})
        if error == "missing":
            return
        frame: dict[str, Any] = {"type": "devices", "ok": ok, "time": time.time()}
        if ok and isinstance(data, list):
            frame["devices"] = data
        else:
            frame["error"] = error or "the devices could not be read"
        key = (ok, frame.get("devices"), frame.get("error"))
        if force or key != self._last_devices:
            self._last_devices = key
            self._publish(frame)

    async def _sensors(self) -> None:
        tool = self._tool("sensor_read")
        if tool is None:
            return
        schema = tool.spec().parameters.get("properties", {}).get("sensor", {})
        names = [n for n in schema.get("enum", []) if isinstance(n, str)]
        for name in names:
            ok, data, error = await self._read("sensor_read", {"sensor": name})
            frame: dict[str, Any] = {
                "type": "sensor",
                "sensor": name,
                "ok": ok,
                "time": time.time(),
            }
            if ok and isinstance(data, dict):
                frame["reading"] = data
            else:
                frame["error"] = error or "no reading"
            self._publish(frame)

    async def _boards(self, *, force: bool) -> None:
        boards = []
        for p in self._peripherals:
            try:
                async with asyncio.timeout(READ_TIMEOUT_S):
                    health = await p.health_check()
                boards.append(
                    {
                        "name": p.name,
                        "board_type": p.board_type,
                        "healthy": health.healthy,
                        "detail": health.detail,
                    }
                )
            except Exception as exc:
                boards.append(
                    {
                        "name": p.name,
                        "board_type": p.board_type,
                        "healthy": False,
                        "detail": clip(exc, 200) or type(exc).__name__,
                    }
                )
        if force or boards != self._last_boards:
            self._last_boards = boards
            self._publish({"type": "boards", "boards": boards, "time": time.time()})

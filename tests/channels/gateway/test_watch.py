"""DeviceWatch on its own: what it publishes when reads fail, and what it never runs."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

from clawseed_edge.api import BaseTool, HealthStatus, RiskClass, ToolContext, ToolResult
from clawseed_edge.channels.gateway.watch import DeviceWatch


class Status(BaseTool):
    name = "hardware_status"
    risk = RiskClass.READ

    def __init__(self, outcome: Any) -> None:
        self.outcome = outcome
        self.calls = 0

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        self.calls += 1
        if isinstance(self.outcome, BaseException):
            raise self.outcome
        return ToolResult.ok("states", self.outcome)


class Board:
    name = "pi"
    board_type = "sim"

    def __init__(self, healthy: bool = True) -> None:
        self.healthy = healthy

    async def health_check(self) -> HealthStatus:
        if not self.healthy:
            raise OSError("the USB cable was pulled")
        return HealthStatus(True, "fine")


async def _until(check: Callable[[], bool]) -> None:
    for _ in range(500):
        if check():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("not within 5 s")


async def _frames(watch: DeviceWatch, frames: list[dict[str, Any]], count: int) -> None:
    watch.listener_added()
    try:
        await _until(lambda: len(frames) >= count)
    finally:
        await watch.aclose()


async def test_a_failing_read_is_published_as_an_error_and_the_watch_keeps_going() -> None:
    tool = Status(OSError("i2c bus 1 vanished"))
    frames: list[dict[str, Any]] = []
    watch = DeviceWatch(
        {"hardware_status": tool}.get, [Board(healthy=False)], frames.append, interval_s=0.01
    )
    await _frames(watch, frames, 2)
    devices = next(f for f in frames if f["type"] == "devices")
    boards = next(f for f in frames if f["type"] == "boards")
    assert devices["ok"] is False and "i2c bus 1 vanished" in devices["error"]
    assert boards["boards"] == [
        {"name": "pi", "board_type": "sim", "healthy": False, "detail": "the USB cable was pulled"}
    ]


async def test_unchanged_states_are_published_once_and_a_new_listener_gets_them_again() -> None:
    tool = Status([{"device": "red_led", "value": 0.0}])
    frames: list[dict[str, Any]] = []
    watch = DeviceWatch({"hardware_status": tool}.get, [], frames.append, interval_s=0.01)
    watch.listener_added()
    await _until(lambda: tool.calls >= 5)
    first = [f for f in frames if f["type"] == "devices"]
    watch.listener_added()  # a second listener: a full snapshot for it
    await _until(lambda: len([f for f in frames if f["type"] == "devices"]) >= 2)
    await watch.aclose()
    assert len(first) == 1, "the same states are not sent again every tick"
    assert not watch.running


async def test_a_tool_that_is_not_a_read_is_never_run_by_the_watch() -> None:
    tool = Status([{"device": "red_led", "value": 1.0}])
    tool.risk = RiskClass.ACT  # e.g. a plugin registered under the name
    frames: list[dict[str, Any]] = []
    watch = DeviceWatch({"hardware_status": tool}.get, [Board()], frames.append, interval_s=0.01)
    await _frames(watch, frames, 1)
    assert tool.calls == 0
    assert all(f["type"] != "devices" for f in frames)

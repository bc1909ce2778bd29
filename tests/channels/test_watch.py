"""HardwareWatch on its own: fed by state feeds, never by tools; failures become frames."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from clawseed_edge.api import DeviceState, HealthStatus, SensorReading, StateFeed
from clawseed_edge.channels.watch import HardwareWatch


class Board:
    """A peripheral that publishes: a state feed, a refresh, a health check."""

    name = "pi"
    board_type = "sim"

    def __init__(self, *, healthy: bool = True, refresh_error: Exception | None = None) -> None:
        self.healthy = healthy
        self.refresh_error = refresh_error
        self.states = StateFeed()
        self.refreshes = 0

    async def refresh(self) -> None:
        self.refreshes += 1
        if self.refresh_error is not None:
            raise self.refresh_error
        self.states.publish(SensorReading("pi", "greenhouse", {"t": 21.5}, {"t": "°C"}, 1.0))

    async def health_check(self) -> HealthStatus:
        if not self.healthy:
            raise OSError("the USB cable was pulled")
        return HealthStatus(True, "fine")

    def switch(self, device: str, value: float) -> None:
        self.states.publish(DeviceState("pi", device, "led", "GPIO17", value))

    def tools(self) -> list[Any]:
        raise AssertionError("the watch must not look at tools")


async def _until(check: Callable[[], bool]) -> None:
    for _ in range(500):
        if check():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("not within 5 s")


def _of(frames: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [f for f in frames if f["type"] == kind]


async def test_a_device_change_is_pushed_at_once_and_a_repeat_is_not() -> None:
    board = Board()
    board.switch("red_led", 0.0)
    frames: list[dict[str, Any]] = []
    watch = HardwareWatch([board], frames.append, refresh_s=60.0)  # no refresh in this test
    watch.listener_added()
    await _until(lambda: len(_of(frames, "devices")) == 1)  # the snapshot
    board.switch("red_led", 1.0)
    await _until(lambda: len(_of(frames, "devices")) == 2)
    board.switch("red_led", 1.0)  # no change: not published by the feed
    await asyncio.sleep(0.05)
    await watch.aclose()
    first, second = _of(frames, "devices")
    assert first["devices"][0]["value"] == 0.0 and second["devices"][0]["value"] == 1.0
    assert len(_of(frames, "devices")) == 2
    assert board.states.subscribers == 0, "a closed watch unsubscribes"


async def test_a_burst_of_changes_is_one_frame() -> None:
    board = Board()
    frames: list[dict[str, Any]] = []
    watch = HardwareWatch([board], frames.append, refresh_s=60.0)
    watch.listener_added()
    await _until(lambda: len(_of(frames, "boards")) == 1)
    before = len(_of(frames, "devices"))
    for name in ("a", "b", "c"):  # an estop drives every output at once
        board.switch(name, 0.0)
    await asyncio.sleep(0.05)
    await watch.aclose()
    assert len(_of(frames, "devices")) == before + 1
    assert [d["device"] for d in _of(frames, "devices")[-1]["devices"]] == ["a", "b", "c"]


async def test_a_refresh_brings_readings_through_the_feed() -> None:
    board = Board()
    frames: list[dict[str, Any]] = []
    watch = HardwareWatch([board], frames.append, refresh_s=0.01)
    watch.listener_added()
    await _until(lambda: bool(_of(frames, "sensor")))
    await watch.aclose()
    sensor = _of(frames, "sensor")[0]
    assert sensor["ok"] is True and sensor["reading"]["values"] == {"t": 21.5}


async def test_a_failing_refresh_and_health_are_published_and_the_watch_keeps_going() -> None:
    board = Board(healthy=False, refresh_error=OSError("i2c bus 1 vanished"))
    frames: list[dict[str, Any]] = []
    watch = HardwareWatch([board], frames.append, refresh_s=0.01)
    watch.listener_added()
    await _until(lambda: board.refreshes >= 3)
    await watch.aclose()
    errors = [f for f in _of(frames, "devices") if not f["ok"]]
    assert errors and "i2c bus 1 vanished" in errors[0]["error"]
    assert _of(frames, "boards")[0]["boards"] == [
        {"name": "pi", "board_type": "sim", "healthy": False, "detail": "the USB cable was pulled"}
    ]
    assert len(_of(frames, "boards")) == 1, "unchanged health is sent once"


async def test_without_listeners_nothing_is_subscribed_or_refreshed() -> None:
    board = Board()
    frames: list[dict[str, Any]] = []
    watch = HardwareWatch([board], frames.append, refresh_s=0.01)
    watch.listener_added()
    await _until(lambda: board.refreshes >= 1)
    watch.listener_removed()
    await _until(lambda: not watch.running)
    refreshes = board.refreshes
    board.switch("red_led", 1.0)
    await asyncio.sleep(0.05)
    assert board.refreshes == refreshes and board.states.subscribers == 0
    assert all(f["type"] != "devices" or f["devices"] == [] for f in frames)

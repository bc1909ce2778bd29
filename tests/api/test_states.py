"""StateFeed: latest per key, repeats dropped, listeners on their own loop, bugs contained."""

from __future__ import annotations

import asyncio
import threading

import pytest

from clawseed_edge.api import DeviceState, SensorReading, StateFeed, StateUpdate
from clawseed_edge.api import states as states_module


def _led(value: float | None) -> DeviceState:
    return DeviceState("pi", "red_led", "led", "GPIO17", value)


def test_a_repeated_device_state_is_not_passed_on_but_every_reading_is() -> None:
    feed = StateFeed()
    seen: list[StateUpdate] = []
    feed.subscribe(seen.append)
    assert feed.publish(_led(1.0)) is True
    assert feed.publish(_led(1.0)) is False  # a later time alone is no change
    reading = SensorReading("sensors", "greenhouse", {"t": 21.0}, {"t": "°C"}, 1.0)
    feed.publish(reading)
    feed.publish(SensorReading("sensors", "greenhouse", {"t": 21.0}, {"t": "°C"}, 2.0))
    assert len(seen) == 3
    assert feed.devices() == [_led(1.0)] and feed.readings()[0].time == 2.0


def test_a_failing_listener_does_not_stop_the_others() -> None:
    feed = StateFeed()
    seen: list[StateUpdate] = []

    def broken(update: StateUpdate) -> None:
        raise ValueError("a subscriber's bug")

    feed.subscribe(broken)
    unsubscribe = feed.subscribe(seen.append)
    feed.publish(_led(0.0))
    unsubscribe()
    feed.publish(_led(1.0))
    assert seen == [_led(0.0)]


async def test_a_publish_from_another_thread_reaches_the_listener_on_its_loop() -> None:
    feed = StateFeed()
    got: asyncio.Future[tuple[StateUpdate, int]] = asyncio.get_running_loop().create_future()
    feed.subscribe(lambda u: got.set_result((u, threading.get_ident())))
    worker = threading.Thread(target=feed.publish, args=(_led(1.0),))
    worker.start()
    update, thread = await asyncio.wait_for(got, 5)
    worker.join()
    assert update == _led(1.0) and thread == threading.get_ident()


def test_subscribers_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(states_module, "MAX_SUBSCRIBERS", 2)
    feed = StateFeed()
    feed.subscribe(lambda u: None)
    feed.subscribe(lambda u: None)
    with pytest.raises(RuntimeError, match="at most 2 subscribers"):
        feed.subscribe(lambda u: None)

from __future__ import annotations

import asyncio
import threading
from typing import Any

from clawseed_edge.peripherals.gpio import loads_hardware_toml
from clawseed_edge.peripherals.wired import InputEvent, InputRules
from clawseed_edge.peripherals.wired.inputs import RateWindow
from clawseed_edge.testing.hardware import mock_pin, press, release

from ..conftest import WIRING


def _rules(clock: Any) -> InputRules:
    return InputRules(loads_hardware_toml(WIRING).devices, clock=clock)


def test_rule_turns_press_into_message_and_ignores_release() -> None:
    rules = _rules(lambda: 0.0)
    assert rules.devices() == ["doorbell"]
    message = rules.message_for(InputEvent("doorbell", 1, 100.0))
    assert message is not None
    assert (message.device, message.text, message.at) == (
        "doorbell",
        "the doorbell button was pressed",
        100.0,
    )
    assert rules.message_for(InputEvent("doorbell", 0, 101.0)) is None  # no on_release
    assert rules.message_for(InputEvent("red_led", 1, 101.0)) is None  # no rule


def test_rule_messages_are_rate_limited_per_minute() -> None:
    now = [0.0]
    rules = _rules(lambda: now[0])
    sent = [rules.message_for(InputEvent("doorbell", 1, 0.0)) for _ in range(5)]
    assert sum(m is not None for m in sent) == 2  # events_per_minute = 2
    assert rules.dropped == 3
    now[0] = 60.0
    assert rules.message_for(InputEvent("doorbell", 1, 60.0)) is not None


def test_rate_window() -> None:
    now = [0.0]
    window = RateWindow(lambda: now[0])
    assert window.allow("k", 3, cost=2) and not window.allow("k", 3, cost=2)
    assert window.allow("k", 3) and not window.allow("k", 3)
    now[0] = 30.0
    assert window.retry_after("k") == 30.0
    assert window.allow("other", None)


async def test_button_edges_through_rules(sim_board: Any) -> None:
    board = await sim_board(WIRING)
    now = [0.0]
    rules = InputRules([d.wired.config for d in board.devices()], clock=lambda: now[0])
    stream = board.events()
    messages = rules.messages(stream)
    for _ in range(3):
        press(board, "doorbell")
        release(board, "doorbell")
    first = await asyncio.wait_for(messages.__anext__(), 2)
    second = await asyncio.wait_for(messages.__anext__(), 2)
    assert first.text == second.text == "the doorbell button was pressed"
    await board.disconnect()  # ends the stream, so the generator ends
    rest = [m async for m in messages]
    assert rest == []
    assert rules.dropped == 1  # the third press


async def test_a_button_on_mock_pins_has_no_hold_thread_and_keeps_pull_and_edges(
    sim_board: Any,
) -> None:
    before = set(threading.enumerate())
    board = await sim_board(WIRING)
    pin = mock_pin(board, "doorbell")
    assert pin.pull == "up" and board.device("doorbell").read() == 0  # released
    stream = board.events()
    press(board, "doorbell")
    release(board, "doorbell")
    got = [await asyncio.wait_for(stream.__anext__(), 2) for _ in range(2)]
    assert [(e.device, e.value) for e in got] == [("doorbell", 1), ("doorbell", 0)]
    assert [s.state for s in pin.states][-2:] == [False, True]  # low (pressed), high again
    started = set(threading.enumerate()) - before
    assert not [t for t in started if "held" in repr(getattr(t, "_target", ""))]
    await board.disconnect()

"""Answers that fit Telegram: split at 4,096 characters on line boundaries, short tool lines."""

from __future__ import annotations

import pytest

from clawseed_edge.channels.telegram.channel import approval_text
from clawseed_edge.channels.telegram.text import split_message, tool_line


def test_lines_are_kept_whole_when_they_fit() -> None:
    text = "\n".join(f"{i:03d} " + "y" * 95 for i in range(100))
    parts = split_message(text, 1000)
    assert all(len(p) <= 1000 for p in parts)
    assert "\n".join(parts) == text
    assert all(p.split("\n")[0][:3].isdigit() for p in parts), "each part starts a line"


def test_a_line_longer_than_the_limit_is_cut() -> None:
    parts = split_message("a" * 9000)
    assert [len(p) for p in parts] == [4096, 4096, 808]


def test_empty_text_is_no_message() -> None:
    assert split_message("") == [] and split_message("\n \n") == []


def test_tool_lines_are_short() -> None:
    line = tool_line("gpio_switch", {"device": "porch_light", "on": True, "x": "z" * 500})
    assert line.startswith("⚙ gpio_switch device=porch_light on=True")
    assert len(line) <= 120


def test_an_approval_names_device_action_and_value() -> None:
    frame = {"device": "fan", "action": "switch fan on", "value": 1.0, "tool": "gpio_switch"}
    assert approval_text(frame) == "Approval needed\nDevice: fan\nAction: switch fan on\nValue: 1.0"


@pytest.mark.parametrize(
    ("session_id", "who"),
    [
        ("telegram-4242", "a Telegram chat (4242)"),
        ("telegram-4242-1764000000-2", "a Telegram chat (4242)"),
        ("fleet-greenhouse", "the fleet node greenhouse"),
        ("mqtt-shed", "Home Assistant (MQTT)"),
        ("job-porch_off", "the scheduled job porch_off"),
        ("3f2a9c1d", "the session 3f2a9c1d"),
    ],
)
def test_an_approval_says_who_asked(session_id: str, who: str) -> None:
    frame = {"device": "fan", "action": "switch fan on", "session_id": session_id}
    assert approval_text(frame).endswith(f"\nAsked by: {who}")

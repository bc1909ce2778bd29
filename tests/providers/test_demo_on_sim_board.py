"""The demo model on the embedded default's simulated board: compound requests, real turns.

Each case runs real agent turns (prompt, native calls, SecurityPolicy, GPIO tools, mock pins)
and asserts the pins afterwards: a device must get its own verb, never its neighbour's.
"""

from __future__ import annotations

from typing import Any

import pytest

from clawseed_edge.agent import StaticApprover
from clawseed_edge.config import assemble_agent

RED, LAMP, FAN = "GPIO17", "GPIO18", "GPIO23"


async def run_turns(*messages: str, approve: bool = True) -> tuple[str, dict[str, Any]]:
    """Run ``messages`` as turns on the embedded default; the last answer and the pin values."""
    agent = await assemble_agent(None, sim=True, approver=StaticApprover(approve))
    async with agent:
        answer = ""
        for message in messages:
            answer = await agent.run(message)
        gpio = agent.peripherals[0]
        states = gpio.pin_states()  # type: ignore[attr-defined]
        return answer, {pin: state["value"] for pin, state in states.items()}


@pytest.mark.parametrize(
    ("setup", "message", "expected"),
    [
        # the issue's own sentence: the red LED was switched ON
        (("turn on the red led",), "turn off the red led and turn on the fan", {RED: 0, FAN: 1}),
        (("turn on the fan",), "turn on the red led and turn off the fan", {RED: 1, FAN: 0}),
        ((), "turn on the red led and the fan", {RED: 1, FAN: 1}),
        ((), "switch the red led on, then the fan", {RED: 1, FAN: 1}),
        (("turn on the fan",), "red led on, fan off", {RED: 1, FAN: 0}),
        (("turn on the red led",), "switch the red led off and the fan on", {RED: 0, FAN: 1}),
        (
            ("turn on the red led", "turn on the fan"),
            "turn the red led and the fan off",
            {RED: 0, FAN: 0},
        ),
        (("turn on the red led",), "turn off the red led; turn on the lamp", {RED: 0, LAMP: 0.8}),
        ((), "set the lamp to 50% and switch the red led on", {RED: 1, LAMP: 0.5}),
        (("turn on the red led",), "switch the fan on then turn it off", {RED: 1, FAN: 0}),
    ],
)
async def test_each_device_gets_its_own_verb(
    setup: tuple[str, ...], message: str, expected: dict[str, float]
) -> None:
    answer, pins = await run_turns(*setup, message)
    assert {pin: pins[pin] for pin in expected} == expected, answer
    assert answer.startswith("Done."), answer


@pytest.mark.parametrize(
    ("message", "expected", "left"),
    [
        ("don't turn on the red led", {RED: 0}, "red_led"),
        ("do not switch on the fan", {FAN: 0}, "fan"),
        ("turn on the fan but don't turn on the red led", {RED: 0, FAN: 1}, "red_led"),
        ("turn on the fan, not the red led", {RED: 0, FAN: 1}, "red_led"),
        ("never turn on the lamp and turn on the red led", {RED: 1, LAMP: 0}, "lamp"),
        ("turn on the lamp except the red led", {RED: 0, LAMP: 0.8}, "red_led"),
    ],
)
async def test_negated_parts_are_left_alone_and_said(
    message: str, expected: dict[str, float], left: str
) -> None:
    answer, pins = await run_turns(message)
    assert {pin: pins[pin] for pin in expected} == expected, answer
    assert f"left {left} as it is" in answer


async def test_what_cannot_be_read_is_skipped_and_said() -> None:
    # the door is an input: the LED is switched, the door is reported as skipped
    answer, pins = await run_turns("turn on the red led and blink the door")
    assert pins[RED] == 1
    assert answer == (
        "Done. red_led (GPIO17) is now on. "
        "Skipped: 'blink the door': I have no tool that does that to door."
    )


async def test_without_approval_the_fan_is_not_done_and_the_led_still_is() -> None:
    answer, pins = await run_turns(
        "turn on the red led", "turn off the red led and turn on the fan", approve=False
    )
    assert (pins[RED], pins[FAN]) == (0, 0)
    assert answer.startswith("Done. red_led (GPIO17) is now off. Not done: ")


def test_quick_start_command_reads_well(capsys: pytest.CaptureFixture[str]) -> None:
    from clawseed_edge.cli.main import main

    code = main(["agent", "--sim", "-m", "turn off the red led and turn on the lamp"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert '-> gpio_switch {"device": "red_led", "on": false}' in err
    assert '-> gpio_switch {"device": "lamp", "on": true}' in err
    assert "[pin] GPIO18 (lamp): 0 -> 0.8 (line 0 -> 0.8)" in err
    assert "GPIO17 (red_led): off -> on" not in err
    assert out.strip() == "Done. red_led (GPIO17) is now off; lamp (GPIO18) is now at level 0.8."

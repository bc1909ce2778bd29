"""The maker kinds of issue 11 in the kind table: a PIR motion sensor (gpiozero MotionSensor)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable

import pytest

from clawseed_edge.api import ToolContext
from clawseed_edge.peripherals import KIND_SPECS, PiGpio

SimBoard = Callable[..., Awaitable[PiGpio]]

PIR = '[[devices]]\nname = "hall"\npin = "GPIO4"\nkind = "motion_sensor"\n'


async def wait_for(board: PiGpio, name: str, value: float) -> float | None:
    # gpiozero's queue fills at 10 samples/s; poll (bounded) instead of asserting a time.
    for _ in range(100):
        got = await board.read(name)
        if got == value:
            return got
        await asyncio.sleep(0.05)
    return await board.read(name)


def test_motion_sensor_is_an_input_row_of_the_kind_table() -> None:
    spec = KIND_SPECS["motion_sensor"]
    assert (spec.is_output, spec.gpiozero_class) == (False, "MotionSensor")
    assert spec.describe(1.0) == "detecting motion" and spec.describe(0.0) == "quiet"


async def test_pir_reports_motion_through_gpio_read(sim_board: SimBoard) -> None:
    board = await sim_board(PIR)
    tool = next(t for t in board.tools() if t.name == "gpio_read")
    assert (await tool.execute({"device": "hall"}, ToolContext())).output == (
        "hall (GPIO4) is quiet"
    )
    board.pin_factory.pin("GPIO4").drive_high()
    assert await wait_for(board, "hall", 1.0) == 1.0
    assert (await tool.execute({"device": "hall"}, ToolContext())).output == (
        "hall (GPIO4) is detecting motion"
    )
    board.pin_factory.pin("GPIO4").drive_low()
    assert await wait_for(board, "hall", 0.0) == 0.0


async def test_pir_cannot_be_switched(sim_board: SimBoard) -> None:
    board = await sim_board(PIR)
    assert [t.name for t in board.tools()] == ["gpio_read", "hardware_status"]


BUZZER = '[[devices]]\nname = "beeper"\npin = "GPIO13"\nkind = "tonal_buzzer"\n'


async def play(board: PiGpio, **arguments: object) -> str:
    tool = next(t for t in board.tools() if t.name == "gpio_play_note")
    result = await tool.execute(arguments, ToolContext())
    return result.output if result.success else f"Error: {result.error}"


async def test_tonal_buzzer_plays_a_note_at_its_frequency(sim_board: SimBoard) -> None:
    board = await sim_board(BUZZER)
    pin = board.pin_factory.pin("GPIO13")
    assert await play(board, device="beeper", note="A4") == "beeper (GPIO13) is playing a note (A4)"
    assert pin.frequency == 440.0
    assert await play(board, device="beeper", note="440 Hz") == (
        "beeper (GPIO13) is playing a note (440 Hz)"
    )
    await play(board, device="beeper", note="c#5")
    assert round(pin.frequency, 2) == 554.37
    assert await play(board, device="beeper", note="off") == "beeper (GPIO13) is silent"
    assert not pin.frequency  # no pulses


async def test_tonal_buzzer_refuses_notes_outside_its_range(sim_board: SimBoard) -> None:
    board = await sim_board(BUZZER)
    assert await play(board, device="beeper", note="C8") == (
        "Error: C8 (4186 Hz) is outside this buzzer's range A3..A5 (220..880 Hz)"
    )
    assert (await play(board, device="beeper", note="doh")).startswith("Error: 'doh' is not a note")


async def test_tonal_buzzer_is_silent_in_its_safe_state(sim_board: SimBoard) -> None:
    board = await sim_board(BUZZER)
    await play(board, device="beeper", note="A5")
    await board.apply_safe_state()
    assert not board.pin_factory.pin("GPIO13").frequency


RGB = """
[[devices]]
name = "mood"
pin = "GPIO5"
kind = "rgb_led"
pins = { green = "GPIO6", blue = "GPIO13" }
"""


async def colour(board: PiGpio, value: object) -> str:
    tool = next(t for t in board.tools() if t.name == "gpio_set_colour")
    result = await tool.execute({"device": "mood", "colour": value}, ToolContext())
    return result.output if result.success else f"Error: {result.error}"


def levels(board: PiGpio) -> tuple[float, float, float]:
    pin = board.pin_factory.pin
    return (pin("GPIO5").state, pin("GPIO6").state, pin("GPIO13").state)


async def test_make_it_purple(sim_board: SimBoard) -> None:
    board = await sim_board(RGB)
    assert levels(board) == (0, 0, 0)
    assert await colour(board, "purple") == "mood (GPIO5) now shows #800080"
    r, g, b = levels(board)
    assert (round(r, 3), g, round(b, 3)) == (0.502, 0, 0.502)
    assert await colour(board, "#FF8800") == "mood (GPIO5) now shows #ff8800"
    assert await colour(board, [0, 255, 0]) == "mood (GPIO5) now shows #00ff00"
    assert levels(board) == (0, 1, 0)
    assert await colour(board, "Dark Orange") == "mood (GPIO5) now shows #ff8c00"
    assert (await colour(board, "blurple")).startswith("Error: 'blurple' is not a colour")
    await board.apply_safe_state()
    assert levels(board) == (0, 0, 0)


async def test_rgb_led_switches_and_reads_like_a_light(sim_board: SimBoard) -> None:
    board = await sim_board(RGB)
    assert await board.switch("mood", True) == 1.0
    assert levels(board) == (1, 1, 1)
    status = {s["device"]: s for s in await board.status()}
    assert status["mood"]["value"] == 1.0 and status["mood"]["mode"] == "pwm"


def test_rgb_led_needs_its_green_and_blue_pins() -> None:
    from clawseed_edge.api import ConfigInvalid, PinInUse
    from clawseed_edge.peripherals import default_registry, loads_hardware_toml, validate_devices

    board = default_registry().get("sim")
    one_pin = loads_hardware_toml('[[devices]]\nname = "m"\npin = "GPIO5"\nkind = "rgb_led"\n')
    with pytest.raises(ConfigInvalid, match=r"devices\[0\]\.pins: .*takes pins = \{green"):
        validate_devices(board, one_pin.devices, "<t>")
    clash = loads_hardware_toml(RGB + '[[devices]]\nname = "led"\npin = "GPIO13"\nkind = "led"\n')
    with pytest.raises(PinInUse, match="GPIO13 is already used by device 'mood'"):
        validate_devices(board, clash.devices, "<t>")


SONAR = """
[[devices]]
name = "wall"
pin = "GPIO24"
kind = "distance_sensor"
pins = { trigger = "GPIO23" }
"""


async def test_distance_sensor_reads_metres_from_the_simulated_echo(sim_board: SimBoard) -> None:
    board = await sim_board(SONAR)
    # The mock echo is timed by threads: wait (bounded) for a reading near the simulated 0.5 m.
    distance = None
    for _ in range(100):
        distance = await board.read("wall")
        if distance is not None and 0.3 < distance < 0.8:
            break
        await asyncio.sleep(0.05)
    assert distance is not None and 0.3 < distance < 0.8, distance
    tool = next(t for t in board.tools() if t.name == "gpio_read")
    output = (await tool.execute({"device": "wall"}, ToolContext())).output
    assert re.fullmatch(r"wall \(GPIO24\) is at 0\.\d\d m", output), output


def test_distance_sensor_trigger_pin_is_checked_like_pin() -> None:
    from clawseed_edge.api import PinReserved
    from clawseed_edge.peripherals import default_registry, loads_hardware_toml, validate_devices

    board = default_registry().get("rpi4b")
    wiring = loads_hardware_toml(SONAR.replace('"GPIO23"', '"BOARD1"'))
    with pytest.raises(PinReserved, match=r"'wall'\): pins\.trigger: .*3\.3 V power"):
        validate_devices(board, wiring.devices, "<t>")
    assert KIND_SPECS["distance_sensor"].extra_needs == ("digital_out",)


async def test_make_it_purple_through_an_agent_turn_and_the_policy(sim_board: SimBoard) -> None:
    from clawseed_edge.agent import AgentBuilder, SecurityPolicy
    from clawseed_edge.api import ToolCall
    from clawseed_edge.testing import ScriptedProvider

    board = await sim_board(RGB + BUZZER.replace("GPIO13", "GPIO12"))
    provider = ScriptedProvider(
        [
            ScriptedProvider.calls(
                ToolCall("gpio_set_colour", {"device": "mood", "colour": "purple"}),
                ToolCall("gpio_play_note", {"device": "beeper", "note": "C5"}),
            ),
            "Purple, with a beep.",
        ]
    )
    agent = (
        AgentBuilder()
        .provider(provider)
        .peripherals([board])
        .security_policy(SecurityPolicy(autonomy="full", max_actions_per_hour=None))
        .platform("test")
        .build()
    )
    async with agent:
        assert await agent.run("make the led purple and beep") == "Purple, with a beep."
        frequency = board.pin_factory.pin("GPIO12").frequency
    results = [m.content for m in provider.requests[1].messages if m.role == "tool"]
    assert results == [
        "mood (GPIO5) now shows #800080",
        "beeper (GPIO12) is playing a note (C5)",
    ]
    assert round(frequency, 1) == 523.3

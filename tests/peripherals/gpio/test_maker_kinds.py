"""The maker kinds of issue 11 in the kind table: a PIR motion sensor (gpiozero MotionSensor)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

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

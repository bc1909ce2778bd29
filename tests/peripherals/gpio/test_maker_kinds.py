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

"""A Nucleo and a Pi header in one config share one wired-device model.

Simulated end to end: the Pi header on gpiozero's MockFactory, the Nucleo as the virtual board
running the repository's firmware behind a pty. The same tools, checks, blinking, events and
safe state drive devices on both; only how a value reaches a pin differs.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from clawseed_edge.api import ToolContext
from clawseed_edge.config.file import load_config
from clawseed_edge.config.hardware import build_peripherals
from clawseed_edge.peripherals import apply_safe_state_all
from clawseed_edge.peripherals.gpio import GpioDevice, PiGpio
from clawseed_edge.peripherals.serial.board import SerialBoard
from clawseed_edge.peripherals.serial.devices import SerialDevice
from clawseed_edge.peripherals.wired import InputEvent, PinDevice, WiredBoard
from clawseed_edge.testing.hardware import pin_level, press

from ..serial.test_board import until

CTX = ToolContext(channel="test")

PI_AND_NUCLEO = """
[hardware]
board = "sim"

[[devices]]
name = "porch_light"
pin = "GPIO17"
kind = "led"

[[devices]]
name = "desk_lamp"
pin = "GPIO18"
kind = "pwm_led"
max_level = 0.5

[[devices]]
name = "doorbell"
pin = "GPIO27"
kind = "button"

[[peripherals]]
name = "bench"
type = "nucleo"
board = "nucleo-f401re"
watchdog_ms = 0

[[peripherals.devices]]
name = "ld2"
pin = "D13"
kind = "led"

[[peripherals.devices]]
name = "bench_lamp"
pin = "D3"
kind = "pwm_led"
max_level = 0.5

[[peripherals.devices]]
name = "fan"
pin = "D7"
kind = "relay"
active_high = false

[[peripherals.devices]]
name = "b1"
pin = "user_button"
kind = "button"
bounce_ms = 0
"""


@pytest.fixture
async def boards(tmp_path: Path) -> AsyncIterator[tuple[PiGpio, SerialBoard]]:
    path = tmp_path / "config.toml"
    path.write_text(PI_AND_NUCLEO, encoding="utf-8")
    loaded = load_config(path)
    pi, nucleo = build_peripherals(loaded.config, loaded.source, sim=True)
    assert isinstance(pi, PiGpio) and isinstance(nucleo, SerialBoard)
    async with pi, nucleo:
        yield pi, nucleo


async def _call(pi: PiGpio, tool: str, **arguments: Any) -> Any:
    # The first peripheral carries the one tool set shared by both boards.
    tools = {t.name: t for t in pi.tools()}
    return await tools[tool].execute(arguments, CTX)


def test_both_backends_run_the_same_device_code() -> None:
    for method in ("switch", "toggle", "set_level", "read", "blink", "describe", "tools"):
        shared = getattr(WiredBoard, method)
        assert getattr(PiGpio, method) is shared and getattr(SerialBoard, method) is shared
    for method in ("check_level", "level_of", "safe_value", "describe", "on_value"):
        shared = getattr(PinDevice, method)
        assert getattr(GpioDevice, method) is shared and getattr(SerialDevice, method) is shared


async def test_one_tool_set_switches_dims_and_blinks_on_both_boards(
    boards: tuple[PiGpio, SerialBoard],
) -> None:
    pi, nucleo = boards
    assert nucleo.tools() == []  # one set, carried by the Pi header
    board = nucleo.virtual.state

    for device in ("porch_light", "ld2"):
        result = await _call(pi, "gpio_switch", device=device, on=True)
        assert result.success and result.data == {"device": device, "value": 1.0}
    assert pin_level(pi, "porch_light") == 1.0 and board.level("PA5") == 1

    assert (await _call(pi, "gpio_set_level", device="desk_lamp", level=0.25)).success
    assert (await _call(pi, "gpio_set_level", device="bench_lamp", level=0.25)).success
    assert pin_level(pi, "desk_lamp") == pytest.approx(0.25)
    assert board.pwm["PB3"] == (1000, 16384)  # a 25 % duty at 1 kHz

    # The same check, the same words, whichever board the device is on.
    too_high = [await _call(pi, "gpio_set_level", device=d, level=0.9) for d in ("desk_lamp", "bench_lamp")]  # fmt: skip
    assert [r.error for r in too_high] == [
        "level 0.9 is outside desk_lamp's allowed range 0..0.5",
        "level 0.9 is outside bench_lamp's allowed range 0..0.5",
    ]

    for device in ("porch_light", "ld2"):
        assert (await _call(pi, "gpio_blink", device=device, count=2, on_ms=20, off_ms=20)).success
    blinks = [pi.blinking("porch_light"), nucleo.blinking("ld2")]
    await asyncio.wait_for(asyncio.gather(*(t for t in blinks if t is not None)), 20)
    assert pin_level(pi, "porch_light") == 0.0 and board.level("PA5") == 0
    assert board.history[-4:] == [("PA5", 1), ("PA5", 0), ("PA5", 1), ("PA5", 0)]


async def test_buttons_on_both_boards_become_the_same_input_events(
    boards: tuple[PiGpio, SerialBoard],
) -> None:
    pi, nucleo = boards
    seen: list[InputEvent] = []
    pi.add_listener(seen.append)
    nucleo.add_listener(seen.append)
    press(pi, "doorbell")
    nucleo.virtual.state.drive_input("PC13", 0)  # B1 pressed: pulled up, to ground
    await until(lambda: len(seen) == 2)
    assert sorted((e.device, e.value, e.pin) for e in seen) == [
        ("b1", 1, "PC13"),
        ("doorbell", 1, "GPIO27"),
    ]
    assert await pi.read("doorbell") == 1.0 and await nucleo.read("b1") == 1.0

    status = await _call(pi, "hardware_status")
    assert "doorbell: button on GPIO27 (pi), pressed" in status.output
    assert "b1: button on PC13 (bench), pressed" in status.output


async def test_safe_state_reaches_both_boards(boards: tuple[PiGpio, SerialBoard]) -> None:
    pi, nucleo = boards
    await pi.switch("porch_light", True)
    await nucleo.switch("fan", True)
    await nucleo.set_level("bench_lamp", 0.5)
    assert nucleo.virtual.state.level("PA8") == 0  # an active-low relay, on
    assert await apply_safe_state_all([pi, nucleo]) == []
    assert pin_level(pi, "porch_light") == 0.0
    state = nucleo.virtual.state
    assert state.level("PA8") == 1 and state.pwm == {}
    assert [d.value for d in nucleo.devices() if d.is_output] == [0.0, 0.0, 0.0]

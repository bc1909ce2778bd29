"""Each peripheral publishes its devices' states and its sensors' readings where they happen.

The Pi header (gpiozero on mock pins), the Nucleo (the virtual board on a pty) and the sensor
bank (simulated chips): the same code path as on hardware, observed through ``states``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from clawseed_edge.api import DeviceState, SensorReading, StateSource, StateUpdate
from clawseed_edge.peripherals.gpio import loads_hardware_toml
from clawseed_edge.peripherals.serial.board import SerialBoard
from clawseed_edge.peripherals.serial.link import LinkOptions
from clawseed_edge.testing.hardware import press
from clawseed_edge.testing.sensors import sim_sensor_bank

from .conftest import WIRING


async def _until(check: Callable[[], bool]) -> None:
    for _ in range(1000):
        if check():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("not within 10 s")


def _values(seen: list[StateUpdate], device: str) -> list[float | None]:
    return [u.value for u in seen if isinstance(u, DeviceState) and u.device == device]


async def test_the_pi_header_publishes_writes_edges_and_the_safe_state(sim_board: Any) -> None:
    board = await sim_board(WIRING)
    assert isinstance(board, StateSource)
    assert [s.device for s in board.states.devices()][:2] == ["red_led", "lamp"]  # at connect
    seen: list[StateUpdate] = []
    board.states.subscribe(seen.append)
    await board.switch("red_led", True)
    await board.set_level("lamp", 0.25)
    press(board, "doorbell")
    await _until(lambda: _values(seen, "doorbell") == [1.0])
    await board.apply_safe_state()
    assert _values(seen, "red_led") == [1.0, 0.0]
    assert _values(seen, "lamp") == [0.25, 0.0]
    doorbell = next(s for s in board.states.devices() if s.device == "doorbell")
    assert (doorbell.mode, doorbell.pin, doorbell.peripheral) == ("input", "GPIO27", board.name)


async def test_the_nucleo_publishes_writes_and_the_safe_state() -> None:
    devices = loads_hardware_toml('[[devices]]\nname = "green_led"\npin = "D13"\nkind = "led"\n')
    options = LinkOptions(backoff_s=(0.05, 0.2), watchdog_ms=0)
    async with SerialBoard("nucleo-f401re", devices.devices, sim=True, options=options) as board:
        assert isinstance(board, StateSource)
        seen: list[StateUpdate] = []
        board.states.subscribe(seen.append)
        await board.switch("green_led", True)
        await board.apply_safe_state()
    assert _values(seen, "green_led") == [1.0, 0.0]


async def test_the_sensor_bank_publishes_each_reading_taken() -> None:
    bank = sim_sensor_bank('[[sensors]]\nname = "air"\ndriver = "bme280"\nmin_interval_s = 0')
    async with bank:
        seen: list[StateUpdate] = []
        bank.states.subscribe(seen.append)
        bank.sim.sensor("air").set(temperature=30.0)
        await bank.refresh()
    (reading,) = seen
    assert isinstance(reading, SensorReading) and reading.ok
    assert (reading.sensor, reading.values["temperature"], reading.units["pressure"]) == (
        "air",
        30.0,
        "hPa",
    )


async def test_hardware_status_reads_the_state_feed(sim_board: Any) -> None:
    from clawseed_edge.api import ToolContext

    board = await sim_board(WIRING)
    await board.switch("red_led", True)
    status = next(t for t in board.tools() if t.name == "hardware_status")
    result = await status.execute({}, ToolContext())
    assert result.data == [s.as_dict() for s in board.states.devices()]
    assert "red_led: led on GPIO17, on" in result.output

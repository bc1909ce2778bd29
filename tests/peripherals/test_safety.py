from __future__ import annotations

import asyncio
import os
import signal
from typing import Any

import pytest

from clawseed_edge.api import HardwareError, HealthStatus
from clawseed_edge.peripherals.safety import apply_safe_state_all, install_signal_handlers
from clawseed_edge.testing.hardware import pin_level

from .conftest import WIRING


class _Broken:
    name = "broken"
    board_type = "sim"

    async def apply_safe_state(self) -> None:
        raise HardwareError("board gone")


class _Hung:
    name = "hung"
    board_type = "sim"

    async def apply_safe_state(self) -> None:
        await asyncio.sleep(3600)


async def test_apply_safe_state_all_tries_everyone(sim_board: Any) -> None:
    board = await sim_board(WIRING)
    await board.switch("red_led", True)
    failures = await apply_safe_state_all([_Broken(), _Hung(), board], timeout_s=0.05)  # type: ignore[list-item]
    assert failures[0] == "broken: board gone"
    assert failures[1].startswith("hung: no answer")
    assert pin_level(board, "red_led") == 0


async def _wait_for(predicate: Any) -> None:
    for _ in range(200):
        if predicate():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("condition not reached")


async def test_sigterm_applies_safe_state_then_stops(sim_board: Any) -> None:
    board = await sim_board(WIRING)
    await board.switch("red_led", True)
    stopped = asyncio.Event()
    remove = install_signal_handlers(asyncio.get_running_loop(), [board], stop=stopped.set)
    try:
        os.kill(os.getpid(), signal.SIGTERM)
        await asyncio.wait_for(stopped.wait(), 5)
        assert pin_level(board, "red_led") == 0
    finally:
        remove()


async def test_estop_signal_applies_safe_state_and_keeps_running(sim_board: Any) -> None:
    board = await sim_board(WIRING)
    await board.switch("fan", True)
    stopped: list[bool] = []
    remove = install_signal_handlers(
        asyncio.get_running_loop(), [board], stop=lambda: stopped.append(True)
    )
    try:
        os.kill(os.getpid(), signal.SIGUSR1)
        await _wait_for(lambda: pin_level(board, "fan") == 1)  # active-low relay off
        assert stopped == []
        assert (await board.health_check()) == HealthStatus(True, "6 devices on sim (mock pins)")
    finally:
        remove()


async def test_exit_hook_applies_safe_state(mock_pin_factory: Any) -> None:
    import atexit

    from clawseed_edge.peripherals.gpio import PiGpio, loads_hardware_toml

    board = PiGpio(loads_hardware_toml(WIRING), pin_factory=mock_pin_factory)
    await board.connect()
    await board.switch("red_led", True)
    hook = board._atexit
    assert hook is not None
    atexit.unregister(hook)
    hook()  # what the interpreter does at exit with the board still connected
    assert [bool(s.state) for s in mock_pin_factory.pin("GPIO17").states][-2:] == [True, False]
    assert not board.connected
    with pytest.raises(HardwareError):
        await board.apply_safe_state()

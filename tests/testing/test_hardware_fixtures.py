"""The hardware testing kit, as a user's test suite sees it (fixtures come from the plugin)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from clawseed_edge.api import PinReserved
from clawseed_edge.testing.hardware import mock_pin, pin_level, press, wired_sim_board

DOCS = Path(__file__).parents[2] / "docs" / "hardware.md"


def test_mock_pin_factory_is_fresh_with_pwm(mock_pin_factory: Any) -> None:
    from gpiozero import PWMLED

    assert mock_pin_factory.pins == {}
    led = PWMLED("GPIO18", pin_factory=mock_pin_factory)
    led.value = 0.25
    assert mock_pin_factory.pin("GPIO18").state == pytest.approx(0.25)
    led.close()


async def test_sim_board_is_connected_and_released(sim_board: Any, mock_pin_factory: Any) -> None:
    board = await sim_board('[[devices]]\nname = "red_led"\npin = "GPIO17"\nkind = "led"\n')
    assert board.connected and board.pin_factory is mock_pin_factory
    await board.switch("red_led", True)
    assert pin_level(board, "red_led") == 1 and pin_level(board, "GPIO17") == 1
    assert mock_pin(board, "red_led") is mock_pin_factory.pin("GPIO17")


async def test_wired_sim_board_owns_its_factory() -> None:
    board = wired_sim_board(
        '[[devices]]\nname = "bell"\npin = "GPIO27"\nkind = "button"\npull_up = false\n'
    )
    assert board.pin_factory is None
    async with board:
        press(board, "bell")  # pull-down: pressed = high
        assert pin_level(board, "bell") == 1 and await board.read("bell") == 1
    assert board.pin_factory is None  # closed with the board


def test_wired_sim_board_checks_the_wiring() -> None:
    with pytest.raises(PinReserved, match="<devices_toml>"):
        wired_sim_board('[[devices]]\nname = "x"\npin = "GPIO1"\nkind = "led"\n')


def test_mock_pin_needs_a_connected_board() -> None:
    board = wired_sim_board('[[devices]]\nname = "x"\npin = "GPIO5"\nkind = "led"\n')
    with pytest.raises(RuntimeError, match="connect"):
        mock_pin(board, "x")


def test_the_documented_example_passes_as_a_user_suite(tmp_path: Path) -> None:
    """The example test in docs/hardware.md runs, through the installed pytest plugin."""
    match = re.search(r"<!-- example-test -->\s*```python\n(.*?)```", DOCS.read_text(), re.S)
    assert match, "docs/hardware.md lost its example test"
    (tmp_path / "test_my_wiring.py").write_text(match.group(1))
    (tmp_path / "pytest.ini").write_text("[pytest]\nasyncio_mode = auto\n")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(r"\b[3-9] passed", proc.stdout), proc.stdout


async def test_pin_state_helper(sim_board: Any) -> None:
    from clawseed_edge.testing.hardware import pin_state

    board = await sim_board('[[devices]]\nname = "lamp"\npin = "GPIO18"\nkind = "pwm_led"\n')
    await board.set_level("lamp", 0.5)
    state = pin_state(board, "lamp")
    assert (state["pin"], state["mode"], state["level"]) == ("GPIO18", "pwm", 0.5)
    assert pin_state(board, "GPIO18") == state
    with pytest.raises(KeyError, match="GPIO17"):
        pin_state(board, "GPIO17")

"""gpiozero's real LGPIOFactory on a fake lgpio that records the calls: what the lines go
through at start, at estop and when a servo moves."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

from clawseed_edge.api import PinFactoryUnavailable
from clawseed_edge.cli.hardware_cmd import estop
from clawseed_edge.peripherals.gpio import PiGpio, loads_hardware_toml, make_pin_factory

from .fake_lgpio import FakeLgpio, install

ACTIVE_LOW = """
[hardware]
board = "rpi4b"
pin_factory = "lgpio"

[[devices]]
name = "fan"
pin = "GPIO23"
kind = "relay"
active_high = false

[[devices]]
name = "lamp"
pin = "GPIO18"
kind = "pwm_led"
active_high = false
"""


@pytest.fixture
def fake_lgpio(monkeypatch: pytest.MonkeyPatch) -> FakeLgpio:
    return install(monkeypatch)


def _pwm_duties(fake: FakeLgpio, gpio: int) -> list[Any]:
    return [c[3] for c in fake.calls_for(gpio) if c[0] == "tx_pwm" and c[2]]


async def test_an_active_low_relay_is_never_active_at_start(fake_lgpio: FakeLgpio) -> None:
    board = PiGpio(loads_hardware_toml(ACTIVE_LOW), sim=False)
    await board.connect()
    try:
        # The line is claimed high (relay off) in one step: never low, not even for a moment.
        assert fake_lgpio.levels(23)[0] == 1 and 0 not in fake_lgpio.levels(23)
        # An active-low PWM output (duty 0 = line low = full on) never starts at duty 0.
        assert 0 not in fake_lgpio.levels(18) and 0 not in _pwm_duties(fake_lgpio, 18)
        await board.switch("fan", True)  # and the relay still switches
        assert fake_lgpio.levels(23)[-1] == 0
    finally:
        await board.disconnect()
    assert fake_lgpio.levels(23)[-1] == 1  # the safe value before the line was released


def test_standalone_estop_never_drives_an_active_low_relay_active(
    fake_lgpio: FakeLgpio, capsys: pytest.CaptureFixture[str]
) -> None:
    assert estop(loads_hardware_toml(ACTIVE_LOW)) == 0
    assert "fan (GPIO23): safe value off applied (level 1.0)" in capsys.readouterr().out
    assert fake_lgpio.levels(23) and 0 not in fake_lgpio.levels(23)
    assert 0 not in _pwm_duties(fake_lgpio, 18)


# What importing the real lgpio does (lgUtil.c lguGetWorkDir, lgNotify.c, lgpio.py): make the
# notification FIFO in $LG_WD, else in the cwd; chdir the process there; open it by a relative
# name. Where no FIFO can be made, the C side returns an error code and the relative open fails.
LGPIO_IMPORT = """
import os, sys
from tests.peripherals.gpio.fake_lgpio import FakeLgpio

_wd = os.environ.get("LG_WD") or os.getcwd()
os.chdir(_wd)
_name = os.path.join(_wd, ".lgd-nfy0")
try:
    os.mkfifo(_name, 0o664)
except OSError:
    pass
try:
    _fd = os.open(_name, os.O_RDWR | os.O_NONBLOCK)
    _handle = 0
except OSError:
    _handle = -3
with open(".lgd-nfy{}".format(_handle), "rb"):
    pass
os.close(_fd)
sys.modules[__name__] = FakeLgpio()
"""


@pytest.fixture
def lgpio_that_makes_a_fifo(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any, fake_lgpio: FakeLgpio
) -> None:
    (tmp_path / "lgpio.py").write_text(LGPIO_IMPORT, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "lgpio")  # imported afresh from the file above
    monkeypatch.delenv("LG_WD", raising=False)


def test_lgpio_imported_from_a_read_only_directory_makes_its_fifo_in_the_home(
    lgpio_that_makes_a_fifo: None, monkeypatch: pytest.MonkeyPatch, clawseed_home: Path
) -> None:
    # /proc takes no FIFO, not even from root: the read-only directory of the report.
    monkeypatch.chdir("/proc")
    factory = make_pin_factory("lgpio")
    try:
        assert (clawseed_home / "run" / ".lgd-nfy0").exists()
        assert os.getcwd() == "/proc", "the process keeps its working directory"
        assert "LG_WD" not in os.environ
    finally:
        factory.close()


def test_an_unwritable_lg_wd_is_a_clear_error(
    lgpio_that_makes_a_fifo: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LG_WD", "/proc")
    with pytest.raises(PinFactoryUnavailable, match=r"FIFO in /proc .*set LG_WD"):
        make_pin_factory("lgpio")

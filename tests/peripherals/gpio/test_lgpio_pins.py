"""gpiozero's real LGPIOFactory on a fake lgpio that records the calls: what the lines go
through at start, at estop and when a servo moves."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
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


SERVOS = """
[[devices]]
name = "arm"
pin = "GPIO12"
kind = "servo"
min_pulse_us = 500
max_pulse_us = 2500

[[devices]]
name = "dial"
pin = "GPIO13"
kind = "servo"
min_angle = 0
max_angle = 180
"""


def _servo_widths(fake: FakeLgpio, gpio: int) -> list[int]:
    return [c[2] for c in fake.calls_for(gpio) if c[0] == "tx_servo"]


async def test_servo_pulses_have_microsecond_resolution_on_lgpio(fake_lgpio: FakeLgpio) -> None:
    hardware = loads_hardware_toml('[hardware]\nboard = "rpi4b"\npin_factory = "lgpio"\n' + SERVOS)
    board = PiGpio(hardware, sim=False)
    await board.connect()
    try:
        assert not any(_servo_widths(fake_lgpio, 12))  # safe "off": no pulses at start
        await board.set_level("arm", 0.001)  # 1 µs of a 2000 µs travel
        await board.set_level("arm", -1)
        await board.set_level("dial", 90)  # degrees: the middle of 1000..2000 µs
        await board.set_level("dial", 91)
        assert await board.read("dial") == pytest.approx(91)
    finally:
        await board.disconnect()
    widths = _servo_widths(fake_lgpio, 12)
    assert [w for w in widths if w] == [1501, 500] and widths[-1] == 0  # detached at the end
    assert [w for w in _servo_widths(fake_lgpio, 13) if w] == [1500, 1506]
    assert all(c[3] == 50 for c in fake_lgpio.calls_for(12) if c[0] == "tx_servo" and c[2])


async def test_servo_pulses_on_mock_pins(sim_board: Any, mock_pin_factory: Any) -> None:
    board = await sim_board(SERVOS)
    await board.set_level("arm", 0.001)
    pin = mock_pin_factory.pin("GPIO12")
    assert pin.frequency == 50 and pin.state * 20_000 == pytest.approx(1501)
    await board.set_level("dial", 45)
    assert mock_pin_factory.pin("GPIO13").state * 20_000 == pytest.approx(1250)
    assert await board.read("dial") == pytest.approx(45)
    tool = next(t for t in board.tools() if t.name == "gpio_set_level")
    assert tool.parameters["properties"]["level"]["maximum"] == 180


@pytest.mark.parametrize(
    ("extra", "key", "message"),
    [
        ('kind = "led"\nmin_pulse_us = 900\n', "min_pulse_us", "applies to servos"),
        ('kind = "servo"\nmax_pulse_us = 3000\n', "max_pulse_us", "500..2500"),
        ('kind = "servo"\nmin_pulse_us = 2000\nmax_pulse_us = 1000\n', "max_pulse_us", "greater"),
        ('kind = "servo"\nmin_angle = -90\n', "max_angle", "both"),
    ],
)
def test_servo_settings_are_checked_at_load(extra: str, key: str, message: str) -> None:
    from clawseed_edge.api import ConfigInvalid
    from clawseed_edge.peripherals.boards import default_registry
    from clawseed_edge.peripherals.wired import validate_devices

    hw = loads_hardware_toml(f'[[devices]]\nname = "s"\npin = "GPIO12"\n{extra}')
    with pytest.raises(ConfigInvalid, match=message) as info:
        validate_devices(default_registry().get("rpi4b"), hw.devices)
    assert info.value.key == f"devices[0].{key}"


async def test_a_default_servo_is_not_rounded_to_whole_percent(fake_lgpio: FakeLgpio) -> None:
    # gpiozero's lgpio pin sent tx_pwm(50, int(duty)): 1550 µs became 7 % = 1400 µs.
    hardware = loads_hardware_toml(
        '[hardware]\nboard = "rpi4b"\npin_factory = "lgpio"\n'
        '[[devices]]\nname = "arm"\npin = "GPIO12"\nkind = "servo"\n'
    )
    async with PiGpio(hardware, sim=False) as board:
        await board.set_level("arm", 0.1)
    assert [w for w in _servo_widths(fake_lgpio, 12) if w] == [1550]


async def test_a_pwm_led_on_a_line_high_at_boot_never_starts_at_full(
    fake_lgpio: FakeLgpio,
) -> None:
    # GPIO5 reads high at boot (its default pull-up): an active-high pwm_led with safe "off"
    # must be claimed low, not at the level the line happens to have, then driven at duty 100.
    fake_lgpio.level[5] = 1
    hardware = loads_hardware_toml(
        '[hardware]\nboard = "rpi4b"\npin_factory = "lgpio"\n'
        '[[devices]]\nname = "lamp"\npin = "GPIO5"\nkind = "pwm_led"\n'
    )
    async with PiGpio(hardware, sim=False) as board:
        await board.set_level("lamp", 0.5)
    assert fake_lgpio.levels(5)[0] == 0 and 1 not in fake_lgpio.levels(5)
    assert 100 not in _pwm_duties(fake_lgpio, 5)
    assert 50 in _pwm_duties(fake_lgpio, 5)


BUTTON = """
[hardware]
board = "rpi4b"
pin_factory = "lgpio"

[[devices]]
name = "doorbell"
pin = "GPIO27"
kind = "button"
"""


async def test_a_button_takes_its_edges_from_lgpio_alerts_with_no_polling_thread(
    fake_lgpio: FakeLgpio,
) -> None:
    before = set(threading.enumerate())
    board = PiGpio(loads_hardware_toml(BUTTON), sim=False)
    await board.connect()
    try:
        # The line is an alert line (both edges), not a line a thread samples.
        assert ("gpio_claim_alert", 27, fake_lgpio.BOTH_EDGES) == fake_lgpio.calls_for(27)[-2][:3]
        stream = board.events()
        fake_lgpio.edge(27, 0)  # pulled up: low is pressed
        fake_lgpio.edge(27, 1)
        got = [await asyncio.wait_for(stream.__anext__(), 2) for _ in range(2)]
        assert [(e.device, e.value) for e in got] == [("doorbell", 1), ("doorbell", 0)]
        # No gpiozero hold thread (it would wake 10 times a second for ever).
        started = set(threading.enumerate()) - before
        assert not [t for t in started if "held" in repr(getattr(t, "_target", ""))]
    finally:
        await board.disconnect()

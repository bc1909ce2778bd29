from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

import pytest

from clawseed_edge.cli.hardware_cmd import estop, hardware_status
from clawseed_edge.cli.main import main
from clawseed_edge.peripherals.gpio import loads_hardware_toml

DEVICES = """
[hardware]
board = "rpi4b"

[[devices]]
name = "red_led"
pin = "GPIO17"
kind = "led"

[[devices]]
name = "fan"
pin = "GPIO23"
kind = "relay"
active_high = false
approval = true
max_switches_per_minute = 6

[[devices]]
name = "pump"
pin = "BOARD18"
kind = "digital_out"
safe = "on"
"""


@pytest.fixture
def devices_toml(tmp_path: Path) -> str:
    path = tmp_path / "devices.toml"
    path.write_text(DEVICES)
    return str(path)


def test_status_without_devices(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[provider]\nname = "demo"\n', encoding="utf-8")
    assert main(["--config", str(config), "hardware", "status"]) == 0
    out = capsys.readouterr().out
    assert "(sim)" in out and "No devices are wired" in out


def test_status_reads_the_wiring_of_the_config_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["hardware", "status", "--sim"]) == 0  # the embedded default's devices
    out = capsys.readouterr().out
    assert "red_led: led on GPIO17" in out
    assert "GPIO23  fan" in out and "level=1.0" in out, "active-low relay off = pin high"


def test_status_real_board_does_not_claim_pins(
    devices_toml: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # No lgpio here: a status that touched the pins would fail.
    assert main(["hardware", "status", "--devices-toml", devices_toml]) == 0
    out = capsys.readouterr().out
    assert "Raspberry Pi 4 Model B (rpi4b)" in out and "fan: relay on GPIO23" in out
    assert "live pin states are not read" in out


def test_status_sim_shows_pin_states(devices_toml: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["hardware", "status", "--sim", "--devices-toml", devices_toml, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["board"] == "rpi4b" and doc["sim"] is True
    assert [d["name"] for d in doc["devices"]] == ["red_led", "fan", "pump"]
    assert doc["pins"]["GPIO23"]["level"] == 1.0  # active-low relay, off
    assert doc["pins"]["GPIO24"]["level"] == 1.0  # pump's safe (and initial) value is on


def test_status_bad_wiring(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.toml"
    path.write_text('[[devices]]\nname = "x"\npin = "GPIO0"\nkind = "led"\n')
    assert main(["hardware", "status", "--devices-toml", str(path)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "'x'" in err and "reserved" in err


def test_status_bad_toml(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.toml"
    path.write_text("[[devices]]\nname = 1\n")
    assert main(["hardware", "status", "--devices-toml", str(path)]) == 2
    assert "devices[0]" in capsys.readouterr().err


def test_estop_sim(devices_toml: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["estop", "--sim", "--devices-toml", devices_toml]) == 0
    out = capsys.readouterr().out
    assert "fan (GPIO23): safe value off applied (level 1.0)" in out
    assert "pump (GPIO24): safe value on applied (level 1.0)" in out
    assert "estop: 3 outputs on rpi4b in their safe state" in out


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_estop_pid_sends_sigusr1(capsys: pytest.CaptureFixture[str]) -> None:
    received: list[int] = []
    previous = signal.signal(signal.SIGUSR1, lambda sig, frame: received.append(sig))
    try:
        assert main(["estop", "--pid", str(os.getpid())]) == 0
    finally:
        signal.signal(signal.SIGUSR1, previous)
    assert received == [signal.SIGUSR1]
    assert "applies its safe state" in capsys.readouterr().err


def test_estop_pid_missing(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["estop", "--pid", "999999999"]) == 1
    assert "no process" in capsys.readouterr().err


def test_estop_on_hardware_without_lgpio_explains(
    devices_toml: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "gpiozero.pins.lgpio", None)
    assert main(["estop", "--devices-toml", devices_toml]) == 1
    assert "--sim" in capsys.readouterr().err


def test_handlers_take_a_loaded_config(capsys: pytest.CaptureFixture[str]) -> None:
    hw = loads_hardware_toml('[[devices]]\nname = "led"\npin = "GPIO5"\nkind = "led"\n')
    assert hardware_status(hw, sim=True) == 0
    assert "GPIO5" in capsys.readouterr().out
    assert estop(hw, sim=True) == 0
    assert "estop: 1 output on sim" in capsys.readouterr().out

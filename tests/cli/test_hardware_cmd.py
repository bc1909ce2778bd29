from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

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
    (doc,) = json.loads(capsys.readouterr().out)["peripherals"]
    assert doc["name"] == "pi" and doc["board"] == "rpi4b" and doc["sim"] is True
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


def test_estop_opens_outputs_at_their_safe_value(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # initial "on", safe "off": an estop that created the device at its initial value would
    # switch the heater on for a moment on the way to off.
    from gpiozero.pins.mock import MockFactory, MockPWMPin

    created: list[Any] = []

    class RecordingFactory(MockFactory):  # type: ignore[misc]
        def pin(self, *args: Any, **kwargs: Any) -> Any:
            pin = super().pin(*args, **kwargs)
            created.append(pin)
            return pin

    monkeypatch.setattr(
        "clawseed_edge.peripherals.gpio.pi_gpio.make_pin_factory",
        lambda kind, sim: RecordingFactory(pin_class=MockPWMPin),
    )
    hw = loads_hardware_toml(
        '[[devices]]\nname = "heater"\npin = "GPIO5"\nkind = "digital_out"\n'
        'initial = "on"\nsafe = "off"\n'
    )
    assert estop(hw, sim=True) == 0
    assert "heater (GPIO5): safe value off applied (level 0.0)" in capsys.readouterr().out
    (pin,) = created
    assert [s.state for s in pin.states] == [False], "the heater was on during the estop"


def _spawn(code: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=dict(os.environ)
    )


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.terminate()
    proc.wait(timeout=10)
    if proc.stdout is not None:
        proc.stdout.close()


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs /proc")
def test_estop_pid_refuses_a_process_that_is_not_clawseed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        assert main(["estop", "--pid", str(sleeper.pid)]) == 1
        err = capsys.readouterr().err
        assert "is not clawseed-edge; nothing was sent" in err and "sleep 60" in err
        assert sleeper.poll() is None, "estop killed an unrelated process"
    finally:
        sleeper.kill()
        sleeper.wait()


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs /proc")
def test_estop_pid_refuses_clawseed_without_an_estop_handler(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # A clawseed-edge process that installed no estop handler (it opened no pins, or is an
    # older version): SIGUSR1 would kill it, as it killed `chat` (exit 138).
    proc = _spawn("import clawseed_edge, sys, time\nprint('ready', flush=True)\ntime.sleep(60)")
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        assert main(["estop", "--pid", str(proc.pid)]) == 1
        assert "has not announced an estop handler" in capsys.readouterr().err
        assert proc.poll() is None, "estop killed a clawseed-edge process with no handler"
    finally:
        _stop(proc)


SERVICE = """
import asyncio
from clawseed_edge.peripherals.safety import install_signal_handlers

class Board:
    name = "board"
    board_type = "sim"

    async def apply_safe_state(self):
        print("safe", flush=True)

async def main():
    stop = asyncio.Event()
    remove = install_signal_handlers(asyncio.get_running_loop(), [Board()], stop=stop.set)
    print("ready", flush=True)
    await stop.wait()
    remove()

asyncio.run(main())
"""


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs /proc")
def test_estop_pid_signals_a_handler_and_reports_its_confirmation(
    clawseed_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    proc = _spawn(SERVICE)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        assert (clawseed_home / "run" / f"estop-{proc.pid}.json").exists()
        assert main(["estop", "--pid", str(proc.pid)]) == 0
        assert "applied its safe state and keeps running" in capsys.readouterr().err
        assert proc.stdout.readline().strip() == "safe"
        assert proc.poll() is None
        proc.terminate()  # SIGTERM: safe state, then a clean stop that removes the handshake
        assert proc.wait(timeout=10) == 0
        assert not (clawseed_home / "run" / f"estop-{proc.pid}.json").exists()
    finally:
        _stop(proc)


CONFIG_WITH_PERIPHERALS = """
[provider]
name = "demo"

[hardware]
board = "sim"

[[devices]]
name = "lamp"
pin = "GPIO17"
kind = "led"

[[peripherals]]
name = "garage"
type = "pi_gpio"
board = "rpi4b"

[[peripherals.devices]]
name = "door_relay"
pin = "GPIO23"
kind = "relay"
active_high = false
initial = "on"
"""


def test_status_and_estop_cover_every_peripheral_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(CONFIG_WITH_PERIPHERALS, encoding="utf-8")
    assert main(["--config", str(config), "hardware", "status", "--sim", "--json"]) == 0
    docs = json.loads(capsys.readouterr().out)["peripherals"]
    assert [(d["name"], d["board"]) for d in docs] == [("pi", "sim"), ("garage", "rpi4b")]
    assert docs[1]["pins"]["GPIO23"]["device"] == "door_relay"
    assert main(["--config", str(config), "estop", "--sim"]) == 0
    out = capsys.readouterr().out
    assert "lamp (GPIO17): safe value off applied" in out
    assert "door_relay (GPIO23): safe value off applied (level 1.0)" in out
    assert "estop: 2 outputs on sim, rpi4b in their safe state" in out


def test_estop_tries_every_peripheral_when_one_fails(capsys: pytest.CaptureFixture[str]) -> None:
    from clawseed_edge.peripherals.gpio import PiGpio

    class Gone:
        name = "nucleo"
        board_type = "nucleo-f401re"

        async def connect(self) -> None:
            raise OSError("no such device: /dev/ttyACM0")

    pi = PiGpio(loads_hardware_toml('[[devices]]\nname = "led"\npin = "GPIO5"\nkind = "led"\n'))
    assert estop([Gone(), pi]) == 1
    out, err = capsys.readouterr()
    assert "error: nucleo: OSError: no such device" in err
    assert "led (GPIO5): safe value off applied" in out
    assert "NOT every output is in its safe state" in out


def test_estop_falls_back_to_a_signal_when_the_control_socket_does_not_answer(
    clawseed_home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A service whose socket accepts nothing (no descriptor left, a stuck loop) still stops."""
    import os
    import socket

    from clawseed_edge.cli import hardware_cmd
    from clawseed_edge.peripherals.estop_handshake import EstopHandshake
    from clawseed_edge.service import control_path

    handshake = EstopHandshake(clawseed_home)  # this process plays the running service
    handshake.write()
    signalled: list[tuple[int, Path]] = []

    def fake_send_estop(pid: int, *, home: Path, **_: object) -> int:
        signalled.append((pid, Path(home)))
        return 0

    monkeypatch.setattr(hardware_cmd, "send_estop", fake_send_estop)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(control_path(clawseed_home)))
    listener.listen(8)  # listening, never accepting: connect succeeds, no answer comes
    try:
        result = hardware_cmd.estop_running_service(timeout_s=0.5)
    finally:
        listener.close()
        handshake.remove()
    assert result == 0
    assert signalled == [(os.getpid(), clawseed_home)]
    assert "did not answer" in capsys.readouterr().err

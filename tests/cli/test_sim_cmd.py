"""``clawseed-edge sim nucleo`` prints its pty path first and serves the firmware there."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import serial

from clawseed_edge.cli.main import main


def test_sim_nucleo_serves_the_firmware_on_the_printed_path() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "clawseed_edge", "sim", "nucleo", "--board", "nucleo-g0b1re",
         "--adc", "PA0=4095"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        path = proc.stdout.readline().strip()
        assert path.startswith("/dev/")
        with serial.Serial(path, 115200, timeout=10) as link:
            link.write(b'{"id":1,"op":"hello"}\n{"id":2,"op":"adc.read","args":{"pin":"A0"}}\n')
            hello = json.loads(link.readline())
            adc = json.loads(link.readline())
        assert hello["result"]["board"] == "nucleo-g0b1re"
        assert adc["result"]["raw"] == 4095
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0


def test_sim_nucleo_refuses_a_pi_and_bad_adc(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["sim", "nucleo", "--board", "rpi4b"]) == 1
    assert "not a Nucleo" in capsys.readouterr().err
    assert main(["sim", "nucleo", "--adc", "PA0"]) == 2
    assert "PIN=RAW" in capsys.readouterr().err


def test_sim_nucleo_refuses_adc_on_a_pin_micropython_cannot_read(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["sim", "nucleo", "--board", "nucleo-g0b1re", "--adc", "A4=100"]) == 2
    err = capsys.readouterr().err
    assert "PB11 on nucleo-g0b1re is not analog" in err and "under MicroPython" in err


def test_sim_nucleo_prints_every_pin_change_with_its_device(tmp_path) -> None:  # type: ignore[no-untyped-def]
    config = tmp_path / "config.toml"
    config.write_text(
        '[[peripherals]]\nname = "bench"\ntype = "nucleo"\nboard = "nucleo-f401re"\n'
        '[[peripherals.devices]]\nname = "door"\npin = "D7"\nkind = "relay"\n',
        encoding="utf-8",
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "clawseed_edge", "--config", str(config), "sim", "nucleo"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        path = proc.stdout.readline().strip()
        with serial.Serial(path, 115200, timeout=10) as link:
            link.write(
                b'{"id":1,"op":"pin.write","args":{"pin":"D7","value":1}}\n'
                b'{"id":2,"op":"pwm.set","args":{"pin":"D5","freq":1000,"duty":0.25}}\n'
                b'{"id":3,"op":"safe"}\n'
            )
            for _ in range(3):
                assert json.loads(link.readline())["ok"]
        lines = [proc.stdout.readline().strip() for _ in range(4)]
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
    assert lines == [
        "[pin] PA8 (D7, door): 1",
        "[pin] PB4 (D5): pwm 1000 Hz, duty 25%",
        "[pin] PB4 (D5): pwm off",
        "[pin] PA8 (D7, door): 0",
    ]

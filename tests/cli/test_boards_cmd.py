from __future__ import annotations

import json

import pytest

from clawseed_edge.cli.main import main


def test_boards_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["boards", "list"]) == 0
    out = capsys.readouterr().out
    ids = [line.split()[0] for line in out.splitlines()]
    assert ids == sorted(ids) and {"rpi4b", "nucleo-f401re", "sim"} <= set(ids)
    assert "0483:374B" in out


def test_boards_list_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["boards", "list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {"id": "rpi5", "name": "Raspberry Pi 5", "family": "pi", "usb": []} in rows


def test_boards_show_nucleo(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["boards", "show", "nucleo-f401re"]) == 0
    out = capsys.readouterr().out
    assert "flash target (pyocd): stm32f401retx" in out
    pa13 = next(line for line in out.splitlines() if line.strip().startswith("PA13"))
    assert "RESERVED" in pa13 and "SWDIO" in pa13
    assert "led1 = PA5" in out and "user_button = PC13" in out


def test_boards_show_pi_lists_power_pins(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["boards", "show", "rpi4b"]) == 0
    out = capsys.readouterr().out
    assert "BOARD1    3.3 V power" in out
    gpio18 = next(line for line in out.splitlines() if line.strip().startswith("GPIO18"))
    assert "[12]" in gpio18 and "pwm" in gpio18


def test_boards_show_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["boards", "show", "sim", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["id"] == "sim" and doc["aliases"]["led1"] == "GPIO17" and len(doc["pins"]) == 28


def test_boards_show_unknown(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["boards", "show", "esp32"]) == 2
    err = capsys.readouterr().err
    assert "unknown board 'esp32'" in err and "rpi4b" in err


def test_boards_without_subcommand_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["boards"]) == 2
    assert "list" in capsys.readouterr().out

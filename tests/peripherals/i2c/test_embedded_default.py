"""The embedded default answers a temperature question from its simulated BME280, with no
config, through the real driver; a sensors config with mistakes fails with file and key."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from clawseed_edge.cli.main import main


def test_how_warm_is_it_on_a_fresh_machine(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["agent", "-m", "how warm is it?"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "embedded default" in err
    assert '-> sensor_read {"sensor": "greenhouse"}' in err
    assert re.search(r"temperature -?\d+\.\d °C", out), out


def test_tools_list_has_sensor_read_with_the_sensor_enum(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import json

    assert main(["tools", "list", "--json"]) == 0
    tools = {t["name"]: t for t in json.loads(capsys.readouterr().out)}
    assert "sensor_read" in tools and "i2c_scan" in tools
    assert "i2c_write_register" not in tools


def test_unknown_driver_in_a_config_names_file_key_and_drivers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        '[provider]\nname = "demo"\n[[sensors]]\nname = "air"\ndriver = "bme820"\n',
        encoding="utf-8",
    )
    code = main(["--config", str(cfg), "agent", "--sim", "-m", "hi"])
    err = capsys.readouterr().err
    assert code != 0
    assert f"{cfg}: sensors[0].driver: unknown sensor driver 'bme820'" in err
    assert "bme280" in err


def test_hardware_status_shows_the_simulated_readings(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["hardware", "status", "--sim"]) == 0
    out = capsys.readouterr().out
    assert re.search(
        r"greenhouse +bme280 +on I2C bus 1 at 0x76: temperature 21\.0 °C, humidity 45\.0 %RH, "
        r"pressure 1013\.2 hPa \(read at ",
        out,
    ), out


def test_hardware_status_reads_a_sensors_peripheral_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        '[[peripherals]]\nname = "shed"\ntype = "sensors"\nboard = "sim"\n'
        '[[peripherals.sensors]]\nname = "shed_air"\ndriver = "sht31"\n',
        encoding="utf-8",
    )
    assert main(["--config", str(cfg), "hardware", "status"]) == 0
    out = capsys.readouterr().out
    assert "simulated sensors (shed):" in out
    assert re.search(r"shed_air +sht31 +on I2C bus 1 at 0x44: temperature 21\.0 °C", out), out

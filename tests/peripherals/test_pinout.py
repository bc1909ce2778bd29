"""Board pinouts as configured (the MCP server's ``board://`` resources)."""

from __future__ import annotations

from pathlib import Path

from clawseed_edge.config.file import load_config
from clawseed_edge.config.hardware import build_peripherals
from clawseed_edge.peripherals.boards import default_registry
from clawseed_edge.peripherals.pinout import pinouts

SENSORS_ONLY = """
[hardware]
board = "sim"
[[sensors]]
name = "air"
driver = "bme280"
bus = 1
"""


def _peripherals(tmp_path: Path, text: str) -> list[object]:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    loaded = load_config(path)
    return list(
        build_peripherals(loaded.config, loaded.source, sim=True, tables=loaded.peripheral_tables)
    )


def test_the_pi_header_is_described_without_devices_and_the_i2c_bus_uses_its_pins(
    tmp_path: Path,
) -> None:
    peripherals = _peripherals(tmp_path, SENSORS_ONLY)
    (header,) = pinouts(peripherals, default_registry().get("sim"))
    pins = {row["pin"]: row for row in header["pins"]}
    assert header["peripheral"] is None and header["board"] == "sim"
    assert pins["GPIO2"]["used_by"] == {
        "device": "I2C bus 1 (sensors)",
        "kind": "i2c",
        "mode": "i2c",
    }
    assert pins["GPIO2"]["free"] is False and pins["GPIO3"]["free"] is False
    assert pins["GPIO0"]["reserved"].startswith("ID EEPROM") and pins["GPIO0"]["free"] is False
    assert pins["GPIO17"]["free"] is True
    assert header["other_reserved"]["BOARD6"] == "ground"


def test_no_header_and_no_board_peripheral_gives_no_pinout(tmp_path: Path) -> None:
    assert pinouts(_peripherals(tmp_path, SENSORS_ONLY)) == []


def test_a_nucleo_is_described_by_its_peripheral(tmp_path: Path) -> None:
    text = """
[hardware]
board = "sim"
[[peripherals]]
name = "bench"
type = "nucleo"
board = "nucleo-f401re"
[[peripherals.devices]]
name = "fan"
pin = "PA5"
kind = "relay"
"""
    found = pinouts(_peripherals(tmp_path, text), default_registry().get("sim"))
    by = {p["peripheral"]: p for p in found}
    assert set(by) == {None, "bench"}, "the Pi header too, with nothing wired to it"
    pins = {row["pin"]: row for row in by["bench"]["pins"]}
    assert pins["PA5"]["used_by"]["device"] == "fan" and pins["PA5"]["header"] == "D13"
    assert pins["PA6"]["free"] is True

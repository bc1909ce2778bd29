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


KERNEL_SENSORS = """
[hardware]
board = "sim"
[[sensors]]
name = "pond"
driver = "ds18b20"
[[sensors]]
name = "tank"
driver = "ds18b20"
[[sensors]]
name = "shed"
driver = "dht22"
"""


def test_one_wire_and_dht_pins_come_from_the_overlays_in_config_txt(tmp_path: Path) -> None:
    from clawseed_edge.peripherals.pinout import overlay_pins

    config_txt = "# 1-Wire\ndtoverlay=w1-gpio,gpiopin=17\n[pi4]\ndtoverlay=dht11,gpiopin=27\n"
    assert overlay_pins(config_txt) == {"w1-gpio": 17, "dht11": 27}
    peripherals = _peripherals(tmp_path, KERNEL_SENSORS)
    (header,) = pinouts(peripherals, default_registry().get("sim"), config_txt)
    pins = {row["pin"]: row for row in header["pins"]}
    assert pins["GPIO17"]["used_by"] == {
        "device": "1-Wire bus (pond, tank)",
        "kind": "1-wire",
        "mode": "input",
        "source": "dtoverlay=w1-gpio in config.txt",
    }
    assert pins["GPIO27"]["used_by"]["device"] == "DHT data (shed)"
    assert pins["GPIO17"]["free"] is False and pins["GPIO4"]["free"] is True


def test_without_config_txt_the_overlays_default_pin_is_shown_and_says_so(
    tmp_path: Path,
) -> None:
    peripherals = _peripherals(tmp_path, KERNEL_SENSORS)
    (header,) = pinouts(peripherals, default_registry().get("sim"))
    used = {row["pin"]: row["used_by"] for row in header["pins"] if "used_by" in row}
    assert list(used) == ["GPIO4"], "both default to GPIO4: the first overlay keeps it"
    assert used["GPIO4"]["source"] == "the overlay's default pin (config.txt not read)"
    (header,) = pinouts(peripherals, default_registry().get("sim"), "dtparam=i2c_arm=on\n")
    used = {row["pin"]: row["used_by"] for row in header["pins"] if "used_by" in row}
    assert "config.txt has no dtoverlay=w1-gpio" in used["GPIO4"]["source"]


def test_config_txt_is_read_from_the_first_place_that_has_one(tmp_path: Path) -> None:
    from clawseed_edge.peripherals.pinout import MAX_CONFIG_TXT_BYTES, read_config_txt

    old = tmp_path / "config.txt"
    old.write_text("dtoverlay=w1-gpio\n" + "#" * (2 * MAX_CONFIG_TXT_BYTES), encoding="utf-8")
    assert read_config_txt([tmp_path / "missing.txt"]) is None
    text = read_config_txt([tmp_path / "missing.txt", old])
    assert text is not None and text.startswith("dtoverlay=w1-gpio")
    assert len(text) == MAX_CONFIG_TXT_BYTES, "bounded"

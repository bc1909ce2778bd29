"""Discovery payloads held against Home Assistant's documented schema (issue 36, items 1-3, 5, 6).

The tables below are written from HA's documentation of the sensor and binary-sensor device
classes, not from our code, so a unit we emit that HA does not list for a class fails here.
"""

from __future__ import annotations

from typing import Any

import pytest

from clawseed_edge.api import ConfigInvalid, DeviceState, SensorReading
from clawseed_edge.channels.mqtt.discovery import (
    BRIGHTNESS_SCALE,
    Topics,
    brightness_of,
    discovery_config,
    entity_name,
    level_of,
)
from clawseed_edge.peripherals.boards import default_registry
from clawseed_edge.peripherals.sensors.registry import BUILTIN_DRIVERS, default_driver_registry
from clawseed_edge.peripherals.wired.config import DeviceConfig, validate_devices

#: HA's sensor device classes -> the units its documentation lists for each.
HA_DOCUMENTED_UNITS: dict[str, set[str]] = {
    "apparent_power": {"mVA", "VA", "kVA"},
    "atmospheric_pressure": {"cbar", "bar", "hPa", "mmHg", "inHg", "kPa", "mbar", "Pa", "psi"},
    "battery": {"%"},
    "carbon_dioxide": {"ppm"},
    "carbon_monoxide": {"ppm"},
    "current": {"A", "mA"},
    "distance": {"km", "m", "cm", "mm", "mi", "nmi", "yd", "in", "ft"},
    "frequency": {"Hz", "kHz", "MHz", "GHz"},
    "humidity": {"%"},
    "illuminance": {"lx"},
    "moisture": {"%"},
    "power": {"mW", "W", "kW", "MW", "GW", "TW", "BTU/h"},
    "pressure": {"cbar", "bar", "hPa", "mmHg", "inHg", "kPa", "mbar", "Pa", "psi"},
    "signal_strength": {"dB", "dBm"},
    "temperature": {"°C", "°F", "K"},
    "voltage": {"µV", "mV", "V", "kV", "MV"},
}
HA_BINARY_SENSOR_CLASSES = {
    "battery", "battery_charging", "carbon_monoxide", "cold", "connectivity", "door",
    "garage_door", "gas", "heat", "light", "lock", "moisture", "motion", "moving", "occupancy",
    "opening", "plug", "power", "presence", "problem", "running", "safety", "smoke", "sound",
    "tamper", "update", "vibration", "window",
}  # fmt: skip
HA_SWITCH_CLASSES = {"outlet", "switch"}

TOPICS = Topics("homeassistant", "greenhouse")


def every_driver_reading() -> list[SensorReading]:
    """One reading from every built-in sensor driver, in its own units."""
    registry = default_driver_registry()
    readings = []
    for name in BUILTIN_DRIVERS:
        quantities = getattr(registry.get(name), "quantities", ())
        if quantities:
            values = {q.name: (q.low + q.high) / 2 for q in quantities}
            units = {q.name: q.unit for q in quantities}
            readings.append(SensorReading("pi", name, values, units, 0.0))
    return readings


def check_against_ha(component: dict[str, Any]) -> None:
    device_class = component.get("device_class")
    platform = component["p"]
    if platform == "sensor" and device_class is not None:
        assert device_class in HA_DOCUMENTED_UNITS, component
        assert component.get("unit_of_measurement") in HA_DOCUMENTED_UNITS[device_class], component
    elif platform == "binary_sensor" and device_class is not None:
        assert device_class in HA_BINARY_SENSOR_CLASSES, component
    elif platform == "switch":
        assert device_class in HA_SWITCH_CLASSES, component


def test_every_class_unit_pair_we_emit_is_one_home_assistant_documents() -> None:
    readings = every_driver_reading()
    assert {r.sensor for r in readings} >= {"bme280", "sht31", "dht22", "ds18b20", "bh1750"}
    devices = [
        DeviceState("pi", "echo", "distance_sensor", "GPIO23", 0.5),
        DeviceState("pi", "pump", "relay", "GPIO17", 0.0),
        DeviceState("pi", "door", "digital_in", "GPIO5", 0.0, mode="input"),
    ]
    config = discovery_config(TOPICS, devices=devices, readings=readings, classes={"door": "door"})
    classed = 0
    for component in config["cmps"].values():
        check_against_ha(component)
        classed += "device_class" in component
    assert classed >= 12  # humidity, temperature, pressure, lx, V (ADS1115), distance ...
    by_id = config["cmps"]
    humidity = by_id["greenhouse_bme280_humidity"]
    assert (humidity["device_class"], humidity["unit_of_measurement"]) == ("humidity", "%")
    ain = by_id["greenhouse_ads1115_ain0"]  # classed by its unit, V
    assert (ain["device_class"], ain["unit_of_measurement"]) == ("voltage", "V")


def test_a_unit_home_assistant_does_not_list_keeps_the_unit_and_drops_the_class() -> None:
    reading = SensorReading("pi", "tank", {"pressure": 3.0}, {"pressure": "atm"}, 0.0)
    component = discovery_config(TOPICS, devices=[], readings=[reading])["cmps"][
        "greenhouse_tank_pressure"
    ]
    assert "device_class" not in component and component["unit_of_measurement"] == "atm"


def test_a_class_comes_from_the_kind_or_the_option_never_from_the_name() -> None:
    devices = [
        DeviceState("pi", "doorbell", "button", "GPIO5", 0.0, mode="input"),
        DeviceState("pi", "back_door", "digital_in", "GPIO6", 0.0, mode="input"),
        DeviceState("pi", "window_pir", "motion_sensor", "GPIO13", 0.0, mode="input"),
        DeviceState("pi", "fan", "relay", "GPIO17", 0.0),
        DeviceState("pi", "socket", "relay", "GPIO27", 0.0),
    ]
    classes = {"back_door": "door", "socket": "outlet"}
    cmps = discovery_config(TOPICS, devices=devices, readings=[], classes=classes)["cmps"]
    assert "device_class" not in cmps["greenhouse_doorbell"]
    assert cmps["greenhouse_back_door"]["device_class"] == "door"
    assert cmps["greenhouse_window_pir"]["device_class"] == "motion"
    assert cmps["greenhouse_fan"]["device_class"] == "switch"  # not every relay is an outlet
    assert cmps["greenhouse_socket"]["device_class"] == "outlet"


@pytest.mark.parametrize(
    ("kind", "value", "message"),
    [
        ("digital_in", "doorbell", "not a Home Assistant class"),
        ("relay", "door", "outlet, switch"),
        ("servo", "outlet", "applies to inputs"),
    ],
)
def test_a_wrong_ha_device_class_is_refused_at_load(kind: str, value: str, message: str) -> None:
    board = default_registry().get("rpi4b")
    device = DeviceConfig(name="x", pin="GPIO18", kind=kind, ha_device_class=value)  # type: ignore[arg-type]
    with pytest.raises(ConfigInvalid, match=message) as err:
        validate_devices(board, [device])
    assert err.value.key == "devices[0].ha_device_class"


def test_every_documented_binary_class_loads() -> None:
    board = default_registry().get("rpi4b")
    for cls in sorted(HA_BINARY_SENSOR_CLASSES):
        validate_devices(
            board, [DeviceConfig(name="x", pin="GPIO5", kind="digital_in", ha_device_class=cls)]
        )


def test_brightness_255_is_the_devices_allowed_maximum() -> None:
    capped = (0.0, 0.8)
    assert level_of(BRIGHTNESS_SCALE, capped) == pytest.approx(0.8)  # HA's plain turn-on
    assert level_of(0, capped) == 0.0
    assert level_of(128, capped) == pytest.approx(128 / 255 * 0.8)
    assert brightness_of(0.8, capped) == 255
    assert brightness_of(0.4, capped) == 128
    for b in range(256):  # a round trip keeps every brightness HA can send
        assert brightness_of(level_of(b, capped), capped) == b
    assert level_of(255, None) == 1.0 and brightness_of(1.0, None) == 255


def test_names_do_not_repeat_the_node_and_entity_ids_work_before_and_after_ha_2025_10() -> None:
    assert entity_name("greenhouse", "greenhouse", "temperature") == "temperature"
    assert entity_name("greenhouse", "greenhouse") is None  # HA shows the device's name
    assert entity_name("greenhouse", "greenhouse_fan") == "fan"
    assert entity_name("greenhouse", "soil", "moisture") == "soil moisture"
    reading = SensorReading("pi", "greenhouse", {"temperature": 20.0}, {"temperature": "°C"}, 0)
    cmps = discovery_config(TOPICS, devices=[], readings=[reading])["cmps"]
    for oid, component in cmps.items():
        assert component["object_id"] == oid  # HA before 2025.10 reads this one
        assert component["default_entity_id"] == f"{component['p']}.{oid}"
    assert cmps["greenhouse_greenhouse_temperature"]["name"] == "temperature"


def test_an_approval_device_is_no_switch_in_home_assistant() -> None:
    devices = [
        DeviceState("pi", "heater", "relay", "GPIO22", 0.0),
        DeviceState("pi", "lamp", "pwm_led", "GPIO18", 0.0, mode="pwm", range=(0.0, 1.0)),
    ]
    approvals = {"heater": True, "lamp": True}
    cmps = discovery_config(TOPICS, devices=devices, readings=[], approvals=approvals)["cmps"]
    for oid in ("greenhouse_heater", "greenhouse_lamp"):
        component = cmps[oid]
        assert component["p"] == "binary_sensor"  # state shown, nothing to toggle
        assert "command_topic" not in component and "brightness_command_topic" not in component
        assert component["json_attributes_topic"].endswith("/attributes")
    refusal = cmps["greenhouse_last_refusal"]
    assert refusal["p"] == "sensor" and refusal["state_topic"] == TOPICS.refusal

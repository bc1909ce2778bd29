"""Discovery payloads as pure data, and the [mqtt] table's validation."""

from __future__ import annotations

from pathlib import Path

import pytest

from clawseed_edge.api import ConfigInvalid, DeviceState, SensorReading
from clawseed_edge.channels.mqtt.discovery import Topics, discovery_config
from clawseed_edge.config.file import load_config

TOPICS = Topics("homeassistant", "shed")


def test_unknown_kinds_are_left_out_and_failed_readings_offer_nothing() -> None:
    config = discovery_config(
        TOPICS,
        devices=[DeviceState("pi", "arm", "servo", "GPIO12", 0.0)],
        readings=[SensorReading("bank", "soil", {}, {}, 0.0, "no answer")],
    )
    names = {c["name"] for c in config["cmps"].values()}
    assert names == {
        "emergency stop",
        "emergency stop latched",
        "last refusal",
        "CPU temperature",
        "throttled",
    }


def test_a_sensor_quantity_without_a_class_keeps_its_unit() -> None:
    reading = SensorReading("bank", "soil", {"moisture_raw": 512.0}, {"moisture_raw": "counts"}, 0)
    config = discovery_config(TOPICS, devices=[], readings=[reading], expire_after_s=90)
    component = next(c for c in config["cmps"].values() if c["name"] == "soil moisture raw")
    assert component["unit_of_measurement"] == "counts" and "device_class" not in component
    assert component["expire_after"] == 90
    assert component["value_template"] == "{{ value_json.moisture_raw }}"


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('ca_file = "ca.pem"', "mqtt.ca_file"),
        ('password_env = "MQTT_PASSWORD"', "set username too"),
        ('node_id = "my shed"', "mqtt.node_id"),
        ('protocol = "4"', "mqtt.protocol"),
        ("port = 0", "mqtt.port"),
        ("colour = 1", "colour"),
    ],
)
def test_bad_mqtt_tables_name_the_key(tmp_path: Path, table: str, message: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(f"[mqtt]\nenabled = true\n{table}\n")
    with pytest.raises(ConfigInvalid) as err:
        load_config(path)
    assert message in str(err.value) and str(path) in str(err.value)

"""The Pi's health in Home Assistant: CPU temperature and the throttling flags (the same reader
as the system_info tool), from a simulated sysfs tree, live on the broker."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clawseed_edge.service import Service
from clawseed_edge.testing.mqtt import MosquittoBroker, MqttRecorder

from .nodes import mqtt_node

pytest.importorskip("aiomqtt")

CONFIG = """
[provider]
name = "demo"
[mqtt]
enabled = true
port = {port}
node_id = "pi4"
"""
HEALTH = "clawseed/pi4/health/state"


def fake_sys(root: Path, throttled: str | None) -> Path:
    zone = root / "class" / "thermal" / "thermal_zone0"
    zone.mkdir(parents=True)
    (zone / "temp").write_text("61234\n")
    if throttled is not None:
        firmware = root / "devices" / "platform" / "soc" / "soc:firmware"
        firmware.mkdir(parents=True)
        (firmware / "get_throttled").write_text(throttled + "\n")
    return root


def service(home: Path, broker: MosquittoBroker, sys_root: Path) -> Service:
    return mqtt_node(
        home, broker, CONFIG, sim=False, state_interval_s=0.2, sys_root=sys_root, vcgencmd=None
    )


async def test_throttling_reaches_home_assistant_and_follows_the_flags(
    clawseed_home: Path, tmp_path: Path, mosquitto: MosquittoBroker
) -> None:
    # Under-voltage and throttled now (bits 0, 2), both also "since boot" (16, 18).
    root = fake_sys(tmp_path / "sys", "0x50005")
    async with MqttRecorder(mosquitto, "homeassistant/#", "clawseed/#") as ha:
        async with service(clawseed_home, mosquitto, root):
            raw = await ha.wait_for("homeassistant/device/pi4/config", lambda p: bool(p))
            cmps = {c["name"]: c for c in json.loads(raw)["cmps"].values()}
            throttled = cmps["throttled"]
            assert throttled["p"] == "binary_sensor" and throttled["device_class"] == "problem"
            assert throttled["state_topic"] == HEALTH
            assert "throttled_now" in throttled["value_template"]
            assert throttled["default_entity_id"] == "binary_sensor.pi4_throttled"
            health = json.loads(await ha.wait_for(HEALTH))
            assert health["cpu_temperature"] == 61.2
            assert health["throttled"] == 0x50005 and health["throttled_now"] is True
            assert "under-voltage now (the power supply is too weak)" in health["throttled_flags"]
            assert "throttling has occurred since boot" in health["throttled_flags"]
            # A better power supply: nothing now, the "since boot" flags stay.
            (root / "devices/platform/soc/soc:firmware/get_throttled").write_text("0x50000\n")
            raw = await ha.wait_for(HEALTH, lambda p: json.loads(p)["throttled_now"] is False)
            assert json.loads(raw)["throttled_flags"] == [
                "under-voltage has occurred since boot",
                "throttling has occurred since boot",
            ]


async def test_a_board_that_cannot_tell_publishes_no_throttling(
    clawseed_home: Path, tmp_path: Path, mosquitto: MosquittoBroker
) -> None:
    root = fake_sys(tmp_path / "sys", None)
    async with MqttRecorder(mosquitto, "clawseed/#") as ha:
        async with service(clawseed_home, mosquitto, root):
            health = json.loads(await ha.wait_for(HEALTH))
    assert health["throttled"] is None and health["throttled_now"] is None
    assert health["throttled_flags"] == [] and health["cpu_temperature"] == 61.2

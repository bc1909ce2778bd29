"""The MQTT channel against a real mosquitto, seen from Home Assistant's side: discovery it can
parse, ON/OFF round trips through the SecurityPolicy, an approval device HA cannot switch,
sensor states, the birth message, a broker restart."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from clawseed_edge.api import ConfigInvalid
from clawseed_edge.service import Service
from clawseed_edge.testing.mqtt import MosquittoBroker, MqttRecorder

from .nodes import mqtt_node

pytest.importorskip("aiomqtt")

CONFIG = """
[provider]
name = "demo"
[autonomy]
level = "full"
[hardware]
board = "sim"
[[devices]]
name = "porch_light"
pin = "GPIO17"
kind = "led"
[[devices]]
name = "desk_lamp"
pin = "GPIO18"
kind = "pwm_led"
max_level = 0.8
[[devices]]
name = "heater"
pin = "GPIO22"
kind = "relay"
approval = true
[[devices]]
name = "front_door"
pin = "GPIO5"
kind = "digital_in"
ha_device_class = "door"
[[devices]]
name = "hall_pir"
pin = "GPIO6"
kind = "motion_sensor"
[[sensors]]
name = "greenhouse"
driver = "bme280"
bus = 1
address = 0x76
[mqtt]
enabled = true
host = "127.0.0.1"
port = {port}
node_id = "greenhouse"
keepalive_s = 5
reconnect_max_s = 1
"""

CONFIG_TOPIC = "homeassistant/device/greenhouse/config"
STATE = "clawseed/greenhouse/device/{}/state"
COMMAND = "clawseed/greenhouse/device/{}/set"


def service(home: Path, broker: MosquittoBroker, config: str = CONFIG) -> Service:
    return mqtt_node(home, broker, config, state_interval_s=0.5)


def pin_value(svc: Service, device: str) -> Any:
    pi = next(p for p in svc.runtime.peripherals if p.name == "pi")  # type: ignore[union-attr]
    return next(s.value for s in pi.states.devices() if s.device == device)


def parsed(payload: bytes) -> dict[str, Any]:
    return json.loads(payload) if payload else {}


async def test_discovery_config_is_what_home_assistant_parses(
    clawseed_home: Path, mosquitto: MosquittoBroker
) -> None:
    async with MqttRecorder(mosquitto, "homeassistant/#", "clawseed/#") as ha:
        async with service(clawseed_home, mosquitto):
            raw = await ha.wait_for(CONFIG_TOPIC, lambda p: bool(p))
            assert ha.retained[CONFIG_TOPIC] is False  # live, not from the store
            config = json.loads(raw)
            assert config["dev"]["ids"] == ["clawseed_greenhouse"] and config["o"]["name"]
            assert config["availability_topic"] == "clawseed/greenhouse/availability"
            cmps = config["cmps"]
            by_name = {c["name"]: c for c in cmps.values()}
            for component in cmps.values():
                assert component["p"] and component["unique_id"]
                assert component["object_id"] == component["unique_id"]  # HA < 2025.10
                assert component["default_entity_id"].startswith(component["p"] + ".")
            assert by_name["porch light"]["p"] == "light"
            assert "brightness_command_topic" not in by_name["porch light"]
            assert by_name["desk lamp"]["brightness_scale"] == 255
            assert by_name["heater"]["p"] == "binary_sensor"  # approval: not switched from HA
            assert by_name["front door"]["device_class"] == "door"
            assert by_name["hall pir"]["device_class"] == "motion"
            temperature = by_name["temperature"]  # the node's name is not repeated
            assert temperature["device_class"] == "temperature"
            assert temperature["unit_of_measurement"] == "°C"
            assert temperature["state_class"] == "measurement"
            assert temperature["expire_after"] >= 60
            assert by_name["emergency stop"]["p"] == "button"
            assert by_name["CPU temperature"]["entity_category"] == "diagnostic"
            await ha.wait_for("clawseed/greenhouse/availability", lambda p: p == b"online")
            # Sensor states on their interval, as JSON that the value templates read.
            state = await ha.wait_for("clawseed/greenhouse/sensor/greenhouse/state")
            assert {"temperature", "humidity", "pressure"} <= set(json.loads(state))
        # A clean stop says offline too (retained, for whoever subscribes later).
        await ha.wait_for("clawseed/greenhouse/availability", lambda p: p == b"offline")


async def test_on_off_round_trip_switches_the_simulated_pin(
    clawseed_home: Path, mosquitto: MosquittoBroker
) -> None:
    async with MqttRecorder(mosquitto, "clawseed/#") as ha:
        async with service(clawseed_home, mosquitto) as svc:
            await ha.wait_for(STATE.format("porch_light"), lambda p: p == b"OFF")
            await ha.publish(COMMAND.format("porch_light"), "ON")
            await ha.wait_for(STATE.format("porch_light"), lambda p: p == b"ON")
            assert pin_value(svc, "porch_light") == 1.0
            await ha.publish(COMMAND.format("porch_light"), "OFF")
            await ha.wait_for(STATE.format("porch_light"), lambda p: p == b"OFF")
            assert pin_value(svc, "porch_light") == 0.0
            # Brightness: 0..255 on the wire, 0..max_level (0.8) on the pin; HA's plain
            # turn-on sends 255, which is the lamp's maximum, not a refused 1.0.
            await ha.publish("clawseed/greenhouse/device/desk_lamp/level/set", "51")
            await ha.wait_for("clawseed/greenhouse/device/desk_lamp/level", lambda p: p == b"51")
            assert pin_value(svc, "desk_lamp") == pytest.approx(0.16)
            await ha.publish("clawseed/greenhouse/device/desk_lamp/level/set", "255")
            await ha.wait_for("clawseed/greenhouse/device/desk_lamp/level", lambda p: p == b"255")
            assert pin_value(svc, "desk_lamp") == pytest.approx(0.8)
            # A change from another source (the web app's button) is published at once.
            from clawseed_edge.api import Actor

            assert svc.host is not None
            result = await svc.host.act(
                "gpio_switch", {"device": "porch_light", "on": True}, Actor("person", "gateway")
            )
            assert result.success, result.error
            await ha.wait_for(STATE.format("porch_light"), lambda p: p == b"ON")


async def test_retained_and_malformed_commands_are_dropped(
    clawseed_home: Path, mosquitto: MosquittoBroker, caplog: pytest.LogCaptureFixture
) -> None:
    async with MqttRecorder(mosquitto, "clawseed/#") as ha:
        # Left on the broker before the node came up: state, not a command.
        await ha.publish(COMMAND.format("porch_light"), "ON", retain=True)
        async with service(clawseed_home, mosquitto) as svc:
            await ha.wait_for(STATE.format("porch_light"), lambda p: p == b"OFF")
            await ha.publish(COMMAND.format("porch_light"), "MAYBE")
            await ha.publish(COMMAND.format("porch_light"), b"x" * 10_000)
            await ha.publish("clawseed/greenhouse/device/desk_lamp/level/set", "999")
            # A later good command still works: the channel kept serving.
            await ha.publish(COMMAND.format("heater"), "OFF")
            await ha.publish(COMMAND.format("porch_light"), "ON")
            await ha.wait_for(STATE.format("porch_light"), lambda p: p == b"ON")
            assert pin_value(svc, "desk_lamp") == 0.0
        text = caplog.text
        assert "ignored a retained message" in text
        assert "expected ON or OFF" in text
        assert "max_payload_bytes" in text
        assert "expected 0..255" in text
        await ha.publish(COMMAND.format("porch_light"), "", retain=True)  # clear it


async def test_an_approval_device_is_not_switched_by_home_assistant_with_nobody_to_approve(
    clawseed_home: Path, mosquitto: MosquittoBroker, caplog: pytest.LogCaptureFixture
) -> None:
    async with MqttRecorder(mosquitto, "clawseed/#") as ha:
        async with service(clawseed_home, mosquitto) as svc:
            await ha.wait_for(STATE.format("heater"), lambda p: p == b"OFF")
            before = ha.count(STATE.format("heater"))
            await ha.publish(COMMAND.format("heater"), "ON")
            # The refusal republishes the real state, so HA's switch goes back to off.
            await ha.wait_for(STATE.format("heater"), lambda p: p == b"OFF")
            for _ in range(100):
                if ha.count(STATE.format("heater")) > before:
                    break
                await asyncio.sleep(0.05)
            assert ha.count(STATE.format("heater")) > before
            assert pin_value(svc, "heater") == 0.0
            assert "gpio_switch heater refused" in caplog.text
            # HA shows why: the last-refusal entity, and the device's attribute says where
            # it is switched.
            refusal = json.loads(await ha.wait_for("clawseed/greenhouse/refusal/state"))
            assert refusal["device"] == "heater" and refusal["reason"]
            assert len(refusal["reason"]) <= 255
            note = json.loads(await ha.wait_for("clawseed/greenhouse/device/heater/attributes"))
            assert "approval" in note["approval"] and "phone" in note["approval"]


async def test_birth_message_republishes_and_a_broker_restart_is_survived(
    clawseed_home: Path, mosquitto: MosquittoBroker
) -> None:
    async with service(clawseed_home, mosquitto) as svc:
        channel = next(c for c in svc.channels if c.name == "mqtt")
        async with MqttRecorder(mosquitto, "homeassistant/#") as ha:
            await ha.wait_for(CONFIG_TOPIC, lambda p: bool(p))
            before = ha.count(CONFIG_TOPIC)
            await ha.publish("homeassistant/status", "online")
            await ha.wait_for(CONFIG_TOPIC, lambda p: ha.count(CONFIG_TOPIC) > before)
        mosquitto.restart()  # no persistence: every retained message is gone
        async with MqttRecorder(mosquitto, "homeassistant/#", "clawseed/#") as ha:
            await ha.wait_for(CONFIG_TOPIC, lambda p: bool(p), timeout_s=20)
            await ha.wait_for("clawseed/greenhouse/availability", lambda p: p == b"online")
            assert channel.connections >= 2  # type: ignore[attr-defined]
            await ha.publish(COMMAND.format("porch_light"), "ON")
            await ha.wait_for(STATE.format("porch_light"), lambda p: p == b"ON")


async def test_a_device_removed_from_the_config_is_deleted_in_home_assistant(
    clawseed_home: Path, mosquitto: MosquittoBroker
) -> None:
    async with MqttRecorder(mosquitto, "homeassistant/#") as ha:
        async with service(clawseed_home, mosquitto):
            first = json.loads(await ha.wait_for(CONFIG_TOPIC, lambda p: bool(p)))
        heater = next(k for k, c in first["cmps"].items() if c["name"] == "heater")
        without_heater = CONFIG.replace(
            '[[devices]]\nname = "heater"\npin = "GPIO22"\nkind = "relay"\napproval = true\n', ""
        )
        assert without_heater != CONFIG
        count = ha.count(CONFIG_TOPIC)
        async with service(clawseed_home, mosquitto, without_heater):
            raw = await ha.wait_for(CONFIG_TOPIC, lambda p: ha.count(CONFIG_TOPIC) > count)
        # Only the platform: HA deletes that entity (device-based discovery's removal).
        assert json.loads(raw)["cmps"][heater] == {"p": first["cmps"][heater]["p"]}


async def test_mqtt_5_with_an_account_whose_password_comes_from_the_secrets(
    clawseed_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from clawseed_edge.testing.mqtt import require_mosquitto

    binary = require_mosquitto()
    with MosquittoBroker(tmp_path / "auth", users={"pi": "s3cret"}, binary=binary) as broker:
        config = CONFIG.replace(
            "reconnect_max_s = 1",
            'reconnect_max_s = 1\nprotocol = "5"\nusername = "pi"\npassword_env = "MQTT_PW"',
        )
        monkeypatch.setenv("MQTT_PW", "s3cret")
        async with service(clawseed_home, broker, config) as svc:
            channel = next(c for c in svc.channels if c.name == "mqtt")
            async with asyncio.timeout(10):
                await channel.connected.wait()  # type: ignore[attr-defined]
        monkeypatch.setenv("MQTT_PW", "wrong")
        async with service(clawseed_home, broker, config) as svc:
            channel = next(c for c in svc.channels if c.name == "mqtt")
            await asyncio.sleep(1.5)  # refused: it keeps trying and never connects
            assert not channel.connected.is_set()  # type: ignore[attr-defined]
        monkeypatch.delenv("MQTT_PW")
        with pytest.raises(ConfigInvalid, match="secrets set MQTT_PW"):
            async with service(clawseed_home, broker, config):
                pass


async def test_a_restarted_home_assistant_gets_health_at_once(
    clawseed_home: Path, mosquitto: MosquittoBroker
) -> None:
    # A sampling interval far longer than the test: only the re-announce can send health again.
    svc = mqtt_node(clawseed_home, mosquitto, CONFIG, state_interval_s=3600)
    async with svc, MqttRecorder(mosquitto, "clawseed/#") as ha:
        await ha.wait_for("clawseed/greenhouse/health/state")
        async with MqttRecorder(mosquitto, "clawseed/+/health/state") as late:
            await late.wait_for("clawseed/greenhouse/health/state")  # retained: found at once
            assert late.retained["clawseed/greenhouse/health/state"] is True
        before = ha.count("clawseed/greenhouse/health/state")
        await ha.publish("homeassistant/status", "online")
        await ha.wait_for(
            "clawseed/greenhouse/health/state",
            lambda p: ha.count("clawseed/greenhouse/health/state") > before,
        )

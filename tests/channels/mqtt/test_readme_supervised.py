"""Issue 37 item 1: with the HA_DOC's ``[mqtt]`` table, as written, and the default
``supervised`` autonomy, a switch flipped in Home Assistant switches the LED: it is a person's
command (actor ``person`` via ``mqtt``), not the model's, so no paired phone is needed. A device
with ``approval = true`` still asks, and with nobody to ask it stays off."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from clawseed_edge.testing.hardware import mock_pin
from clawseed_edge.testing.mqtt import MosquittoBroker, MqttRecorder, require_mosquitto

from .nodes import mqtt_node

pytest.importorskip("aiomqtt")

HA_DOC = Path(__file__).resolve().parents[3] / "docs" / "home-assistant.md"

DEVICES = """
[provider]
name = "demo"
[hardware]
board = "sim"
[[devices]]
name = "red_led"
pin = "GPIO17"
kind = "led"
[[devices]]
name = "heater"
pin = "GPIO22"
kind = "relay"
approval = true
"""


def readme_mqtt_table() -> str:
    """The ``[mqtt]`` example of the Home Assistant walk-through (docs/home-assistant.md, which
    the HA_DOC's tour links), as written."""
    section = HA_DOC.read_text(encoding="utf-8").split("## 2. The config", 1)[1]
    block = re.search(r"```toml\n(\[mqtt\]\n.*?)```", section, re.S)
    assert block is not None, "docs/home-assistant.md's config step has an [mqtt] example"
    return block.group(1)


async def test_the_readme_example_switches_the_led_from_home_assistant_under_supervised(
    clawseed_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = readme_mqtt_table()
    assert "autonomy" not in DEVICES  # the default autonomy: supervised
    node = re.search(r'node_id = "(\w+)"', table)
    user = re.search(r'username = "(\w+)"', table)
    password_env = re.search(r'password_env = "(\w+)"', table)
    assert node and user and password_env
    with MosquittoBroker(
        tmp_path / "broker", users={user.group(1): "s3cret"}, binary=require_mosquitto()
    ) as broker:
        monkeypatch.setenv(password_env.group(1), "s3cret")
        # Only the address differs from the HA_DOC: this broker listens on 127.0.0.1.
        local = re.sub(r'host = "[^"]*"', 'host = "127.0.0.1"\nport = {port}', table)
        base = f"clawseed/{node.group(1)}/device"
        async with (
            MqttRecorder(broker, "clawseed/#") as ha,
            mqtt_node(clawseed_home, broker, DEVICES + local) as svc,
        ):
            assert svc.runtime is not None
            policy = svc.runtime.agent.hooks.policy
            assert str(getattr(policy, "autonomy", "")) == "supervised"
            (gpio,) = svc.runtime.peripherals
            mqtt = next(c for c in svc.channels if c.name == "mqtt")
            assert svc.host is not None
            assert mqtt.refresh is svc.host.refresh  # type: ignore[attr-defined]  # one schedule
            await ha.wait_for(f"{base}/red_led/state", lambda p: p == b"OFF")
            await ha.publish(f"{base}/red_led/set", "ON")
            await ha.wait_for(f"{base}/red_led/state", lambda p: p == b"ON")
            await ha.publish(f"{base}/heater/set", "ON")
            await ha.publish(f"{base}/red_led/set", "OFF")  # after the heater's command
            await ha.wait_for(f"{base}/red_led/state", lambda p: p == b"OFF")
            led = [s.state for s in mock_pin(gpio, "red_led").states]
            heater = [s.state for s in mock_pin(gpio, "heater").states]
    assert led == [0, 1, 0]
    assert len(set(heater)) == 1, "the approval device never switched (nobody to ask)"

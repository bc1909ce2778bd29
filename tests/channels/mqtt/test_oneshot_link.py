"""FleetLink, the one-shot process's connection: the retained descriptions are in when it is
entered, calls go to the owner and back on a reply topic of its own, nothing is left behind;
and a one-shot `agent` with the broker down says so and answers with its own devices."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from clawseed_edge.api import RemoteDevices
from clawseed_edge.config.schema import MqttSettings
from clawseed_edge.testing.fake_servers import FakeOllama, Reply
from clawseed_edge.testing.mqtt import MosquittoBroker, MqttRecorder

from .test_fleet import pin, shed

pytest.importorskip("aiomqtt")


async def test_the_link_has_the_descriptions_when_entered_and_calls_through_them(
    tmp_path: Path, mosquitto: MosquittoBroker
) -> None:
    from clawseed_edge.channels.mqtt.oneshot import FleetLink

    settings = MqttSettings(enabled=True, port=mosquitto.port, node_id="garage", fleet_wait_s=10)
    async with shed(tmp_path / "shed", mosquitto, "full") as owner:
        # The shed's description is retained on the broker once it announced.
        async with MqttRecorder(mosquitto, "clawseed/shed/description") as seen:
            await seen.wait_for("clawseed/shed/description")
        remote = RemoteDevices()
        async with FleetLink(settings, remote, password=None) as link:
            # No sleep: the link waited for the retained descriptions (its marker came back).
            assert link.synced
            assert [d.full_name for d in remote.devices()] == ["shed.fan", "shed.heater"]
            result = await remote.call("shed", "gpio_switch", {"device": "fan", "on": True})
            assert result.success, result.error
            assert pin(owner, "fan") == 1.0
            assert link.caller.reply_topic.startswith("clawseed/garage/reply/")
        result = await remote.call("shed", "gpio_switch", {"device": "fan", "on": False})
        assert not result.success and "not connected" in str(result.error)
        assert pin(owner, "fan") == 1.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_one_shot_agent_with_the_broker_down_says_so_and_goes_on(tmp_path: Path) -> None:
    with FakeOllama() as ollama:
        ollama.queue(Reply.text("Hello."))
        config = tmp_path / "config.toml"
        config.write_text(
            f'[provider]\nname = "ollama"\nmodel = "qwen2.5:3b"\nbase_url = "{ollama.url}"\n'
            f'[mqtt]\nenabled = true\nport = {free_port()}\nnode_id = "garage"\n'
        )
        done = subprocess.run(
            [sys.executable, "-m", "clawseed_edge", "--config", str(config), "agent", "-m", "hi"],
            capture_output=True,
            text=True,
            env={**os.environ, "CLAWSEED_HOME": str(tmp_path)},
            timeout=120,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Hello."
    assert "no MQTT broker at 127.0.0.1" in done.stderr
    assert "out of reach" in done.stderr
    assert "Traceback" not in done.stderr

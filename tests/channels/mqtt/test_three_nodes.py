"""Three nodes on one broker: the greenhouse and the shed run; a one-shot `clawseed-edge agent`
on a third (the garage, no hardware of its own) switches the shed's fan through its ordinary
gpio_switch tool, and the shed's own policy refuses the heater (approval, nobody to give it)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from clawseed_edge.testing.fake_servers import FakeOllama, Reply
from clawseed_edge.testing.mqtt import MosquittoBroker

from .test_fleet import node, pin, shed, wait_for_node

pytest.importorskip("aiomqtt")

GARAGE = """
[provider]
name = "ollama"
model = "qwen2.5:3b"
base_url = "{url}"
[autonomy]
level = "full"
[mqtt]
enabled = true
port = {port}
node_id = "garage"
"""


def one_shot(
    home: Path, broker: MosquittoBroker, url: str, message: str
) -> subprocess.CompletedProcess[str]:
    home.mkdir(parents=True, exist_ok=True)
    config = home / "config.toml"
    config.write_text(GARAGE.replace("{url}", url).replace("{port}", str(broker.port)))
    return subprocess.run(
        [sys.executable, "-m", "clawseed_edge", "--config", str(config), "agent", "-m", message],
        capture_output=True,
        text=True,
        env={**os.environ, "CLAWSEED_HOME": str(home)},
        timeout=120,
        check=False,
    )


def switch_enum(chat: dict[str, object]) -> list[str]:
    tools = chat["tools"]
    assert isinstance(tools, list)
    switch = next(t for t in tools if t["function"]["name"] == "gpio_switch")
    return list(switch["function"]["parameters"]["properties"]["device"]["enum"])


async def test_a_one_shot_agent_on_a_third_node_switches_the_sheds_fan(
    tmp_path: Path, mosquitto: MosquittoBroker
) -> None:
    greenhouse = node(tmp_path / "greenhouse", mosquitto, "greenhouse", "pump")
    async with greenhouse, shed(tmp_path / "shed", mosquitto, "full") as owner:
        caller = next(c for c in greenhouse.channels if c.name == "mqtt")
        await wait_for_node(caller, "shed")
        with FakeOllama() as ollama:
            ollama.queue(
                Reply.tool_call("gpio_switch", {"device": "shed.fan", "on": True}),
                Reply.text("The shed's fan is on."),
                Reply.tool_call("gpio_switch", {"device": "shed.heater", "on": True}),
                Reply.text("The shed would not."),
            )
            done = await asyncio.to_thread(
                one_shot, tmp_path / "garage", mosquitto, ollama.url, "shed fan on"
            )
            assert done.returncode == 0, done.stderr
            assert done.stdout.strip() == "The shed's fan is on."
            assert pin(owner, "fan") == 1.0 and pin(greenhouse, "pump") == 0.0
            refused = await asyncio.to_thread(
                one_shot, tmp_path / "garage", mosquitto, ollama.url, "shed heater on"
            )
            chats = [r.json for r in ollama.requests_to("/api/chat")]
        assert refused.returncode == 0, refused.stderr
        assert pin(owner, "heater") == 0.0
        # Not a node: the one-shot left no description or availability on the broker.
        assert caller.fleet.get("garage") is None  # type: ignore[attr-defined]
    # The one-shot saw both running nodes' devices in its one gpio_switch tool.
    assert switch_enum(chats[0]) == ["greenhouse.pump", "shed.fan", "shed.heater"]
    answered = [m["content"] for m in chats[1]["messages"] if m["role"] == "tool"]
    assert answered and "fan" in answered[0] and "now on" in answered[0]
    told = [m["content"] for m in chats[3]["messages"] if m["role"] == "tool"]
    assert told and ("approv" in told[0].lower() or "no one" in told[0].lower()), told
    assert "security policy" in told[0].lower()


async def described(broker: MosquittoBroker, node_id: str) -> None:
    """Until ``node_id``'s retained description is on the broker (a node announces it about
    half a second after connecting; a one-shot started sooner would find no shed yet)."""
    import aiomqtt

    async with aiomqtt.Client("127.0.0.1", broker.port) as client, asyncio.timeout(20):
        await client.subscribe(f"clawseed/{node_id}/description", qos=1)
        async for _ in client.messages:
            return


async def test_chat_reads_the_sheds_fan_too(tmp_path: Path, mosquitto: MosquittoBroker) -> None:
    async with shed(tmp_path / "shed", mosquitto, "full") as owner:
        await described(mosquitto, "shed")
        with FakeOllama() as ollama:
            ollama.queue(
                Reply.tool_call("gpio_read", {"device": "shed.fan"}),
                Reply.text("The shed's fan is off."),
            )
            home = tmp_path / "garage"
            home.mkdir()
            config = home / "config.toml"
            text = GARAGE.replace("{url}", ollama.url).replace("{port}", str(mosquitto.port))
            config.write_text(text)
            done = await asyncio.to_thread(
                subprocess.run,
                [sys.executable, "-m", "clawseed_edge", "--config", str(config), "chat"],
                input="is the shed's fan on?\n/exit\n",
                capture_output=True,
                text=True,
                env={**os.environ, "CLAWSEED_HOME": str(home)},
                timeout=120,
                check=False,
            )
            chats = [r.json for r in ollama.requests_to("/api/chat")]
        assert done.returncode == 0, done.stderr
        assert "The shed's fan is off." in done.stdout
        assert pin(owner, "fan") == 0.0
    told = [m["content"] for m in chats[1]["messages"] if m["role"] == "tool"]
    assert told and "fan" in told[0] and "off" in told[0], told

"""Two running nodes: the greenhouse's agent sees the shed's devices in its ordinary tools
(``shed.fan``), a turn switches the shed's fan through them, and the shed's policy decides."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from clawseed_edge.service import Service
from clawseed_edge.testing import ScriptedProvider
from clawseed_edge.testing.mqtt import MosquittoBroker, MqttRecorder

from .nodes import mqtt_node
from .test_fleet import pin, shed

pytest.importorskip("aiomqtt")

GREENHOUSE = """
[provider]
name = "demo"
[autonomy]
level = "full"
[hardware]
board = "sim"
[[devices]]
name = "pump"
pin = "GPIO17"
kind = "relay"
[mqtt]
enabled = true
port = {port}
node_id = "greenhouse"
"""


def greenhouse(home: Path, broker: MosquittoBroker, provider: ScriptedProvider) -> Service:
    return mqtt_node(home, broker, GREENHOUSE, provider=provider)


def switch_enum(svc: Service) -> list[str]:
    assert svc.runtime is not None
    spec = next(s for s in svc.runtime.agent.registry.specs() if s.name == "gpio_switch")
    return list(spec.parameters["properties"]["device"]["enum"])


async def wait_for(check: object, what: str) -> None:
    for _ in range(200):
        if check():  # type: ignore[operator]
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"never: {what}")


async def test_the_agent_switches_another_nodes_device_through_its_ordinary_tool(
    tmp_path: Path, mosquitto: MosquittoBroker
) -> None:
    provider = ScriptedProvider(
        [
            ScriptedProvider.call("gpio_switch", device="shed.fan", on=True),
            "The shed's fan is on.",
            ScriptedProvider.call("gpio_switch", device="shed.heater", on=True),
            "The shed refused.",
        ]
    )
    async with (
        greenhouse(tmp_path / "greenhouse", mosquitto, provider) as gh,
        shed(tmp_path / "shed", mosquitto, "full") as owner,
    ):
        await wait_for(lambda: "shed.fan" in switch_enum(gh), "shed.fan in the enum")
        assert switch_enum(gh) == ["pump", "shed.fan", "shed.heater"]
        assert gh.runtime is not None
        answer = await gh.runtime.agent.run("switch the shed's fan on", session_id="t1")
        assert answer == "The shed's fan is on."
        assert pin(owner, "fan") == 1.0 and pin(gh, "pump") == 0.0
        # What the model was told: the remote name in the enum of the one gpio_switch tool.
        sent = provider.requests[0]
        tools = [t.name for t in sent.tools]
        assert tools.count("gpio_switch") == 1
        switch = next(t for t in sent.tools if t.name == "gpio_switch")
        assert switch.parameters["properties"]["device"]["enum"] == [
            "pump",
            "shed.fan",
            "shed.heater",
        ]
        tool_result = provider.requests[1].messages[-1]
        assert "fan" in tool_result.content and "now on" in tool_result.content
        # The heater needs approval on the shed, where nobody can give it: the shed refuses.
        await gh.runtime.agent.run("and the heater", session_id="t2")
        refused = provider.requests[3].messages[-1].content
        assert pin(owner, "heater") == 0.0
        assert "approv" in refused.lower() or "no one" in refused.lower(), refused
        assert "shed answered: " in refused, "the refusal says it is the shed's"


async def test_home_assistant_commands_on_our_topics_do_not_travel_to_other_nodes(
    tmp_path: Path, mosquitto: MosquittoBroker, caplog: pytest.LogCaptureFixture
) -> None:
    async with (
        greenhouse(tmp_path / "greenhouse", mosquitto, ScriptedProvider()) as gh,
        shed(tmp_path / "shed", mosquitto, "full") as owner,
        MqttRecorder(mosquitto, "clawseed/greenhouse/device/#") as ha,
    ):
        await wait_for(lambda: "shed.fan" in switch_enum(gh), "shed.fan in the enum")
        await ha.publish("clawseed/greenhouse/device/shed.fan/set", "ON")
        await ha.publish("clawseed/greenhouse/device/pump/set", "ON")
        await ha.wait_for("clawseed/greenhouse/device/pump/state", lambda p: p == b"ON")
        channel = next(c for c in gh.channels if c.name == "mqtt")
        # A round trip to the shed after both: the fan was never asked to switch.
        result = await channel.call("shed", "gpio_read", {"device": "fan"})  # type: ignore[attr-defined]
        assert result.success and pin(owner, "fan") == 0.0
    assert "dropped a command for 'shed.fan'" in caplog.text


SHED_WITH_SENSOR = """
[provider]
name = "demo"
[autonomy]
level = "full"
[[sensors]]
name = "air"
driver = "bme280"
bus = 1
address = 0x76
[mqtt]
enabled = true
port = {port}
node_id = "shed"
"""


async def test_a_sensor_only_another_node_has_is_read_through_sensor_read(
    tmp_path: Path, mosquitto: MosquittoBroker
) -> None:
    provider = ScriptedProvider(
        [ScriptedProvider.call("sensor_read", sensor="shed.air"), "It is mild in the shed."]
    )
    owner = mqtt_node(tmp_path / "shed", mosquitto, SHED_WITH_SENSOR)
    async with greenhouse(tmp_path / "greenhouse", mosquitto, provider) as gh, owner:
        assert gh.runtime is not None

        def offered() -> list[str]:
            specs = {s.name: s for s in gh.runtime.agent.registry.specs()}  # type: ignore[union-attr]
            if "sensor_read" not in specs:
                return []
            return list(specs["sensor_read"].parameters["properties"]["sensor"]["enum"])

        # The greenhouse has no sensor: sensor_read is offered once the shed's air is known.
        await wait_for(lambda: offered() == ["shed.air"], "shed.air in sensor_read")
        answer = await gh.runtime.agent.run("how is the air in the shed?", session_id="s")
        assert answer == "It is mild in the shed."
        result = provider.requests[1].messages[-1].content
        assert "temperature" in result and "°C" in result, result

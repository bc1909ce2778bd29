"""Other nodes' devices in the ordinary device tools: the enums, the routing, the name rule."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from clawseed_edge.agent.registry import ToolRegistry
from clawseed_edge.api import (
    BaseTool,
    DeviceAction,
    RemoteDevice,
    RemoteDevices,
    RemoteSensor,
    RiskClass,
    ToolContext,
    ToolResult,
)
from clawseed_edge.peripherals.fleet_tools import fleet_tools

CTX = ToolContext(session_id="s", channel="test")


class LocalSwitch(BaseTool):
    """A local gpio_switch over the devices it is given (what peripherals build)."""

    name = "gpio_switch"
    description = "Switch a device on or off."
    risk = RiskClass.ACT

    def __init__(self, *devices: str) -> None:
        self.calls: list[dict[str, Any]] = []
        self.parameters = {
            "type": "object",
            "properties": {
                "device": {"type": "string", "enum": list(devices)},
                "on": {"type": "boolean"},
            },
            "required": ["device", "on"],
            "additionalProperties": False,
        }

    def describe_action(self, arguments: Mapping[str, Any]) -> DeviceAction:
        return DeviceAction(str(arguments.get("device")), "relay", "write", value=1.0)

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        self.calls.append(dict(arguments))
        return ToolResult.ok(f"local {arguments['device']}")


def enum(registry: ToolRegistry, tool: str, key: str = "device") -> list[str]:
    spec = next(s for s in registry.specs() if s.name == tool)
    return list(spec.parameters["properties"][key]["enum"])


def shed(remote: RemoteDevices, *devices: tuple[str, str]) -> None:
    remote.set_node(
        "shed",
        [RemoteDevice("shed", name, kind) for name, kind in devices],
        [RemoteSensor("shed", "soil", {"moisture": "%"})],
    )


def build(local: LocalSwitch | None, remote: RemoteDevices) -> ToolRegistry:
    registry = ToolRegistry()
    if local is not None:
        registry.register(local)
    for tool in fleet_tools({"gpio_switch": local} if local else {}, remote):
        registry.register_or_replace(tool)
    return registry


async def test_remote_devices_join_the_enums_and_the_schema_follows_them() -> None:
    remote = RemoteDevices()
    registry = build(LocalSwitch("pump"), remote)
    names_before = [s.name for s in registry.specs()]
    assert names_before == ["gpio_switch"]  # nothing remote yet: no empty remote-only tools
    version = registry.version
    shed(remote, ("fan", "relay"), ("lamp", "pwm_led"), ("door", "button"))
    # The next turn (the next specs()) sees the new enums; the version moves (new prompt).
    assert registry.version > version
    assert enum(registry, "gpio_switch") == ["pump", "shed.fan", "shed.lamp"]
    assert enum(registry, "gpio_set_level") == ["shed.lamp"]
    assert enum(registry, "gpio_read") == ["shed.fan", "shed.lamp", "shed.door"]
    assert enum(registry, "sensor_read", "sensor") == ["shed.soil"]
    spec = next(s for s in registry.specs() if s.name == "gpio_switch")
    assert "<node>.<name>" in spec.description
    # Still one short list: one tool per action, none per node.
    assert sorted(s.name for s in registry.specs()) == [
        "gpio_read",
        "gpio_set_level",
        "gpio_switch",
        "gpio_toggle",
        "hardware_status",
        "sensor_read",
    ]
    remote.drop_node("shed")
    assert enum(registry, "gpio_switch") == ["pump"]
    assert [s.name for s in registry.specs()] == ["gpio_switch"]


async def test_a_call_to_a_remote_name_travels_and_a_local_one_stays() -> None:
    remote = RemoteDevices()
    sent: list[tuple[str, str, dict[str, Any]]] = []

    async def carry(node: str, tool: str, arguments: dict[str, Any]) -> ToolResult:
        sent.append((node, tool, arguments))
        return ToolResult.ok(f"{arguments['device']} is now on")

    local = LocalSwitch("pump")
    registry = build(local, remote)
    tool = registry.get("gpio_switch")
    assert tool is not None
    shed(remote, ("fan", "relay"))
    # Nobody bound: a clear failure, never an exception.
    result = await tool.execute({"device": "shed.fan", "on": True}, CTX)
    assert not result.success and "not connected" in str(result.error)
    remote.bind(carry)
    result = await tool.execute({"device": "shed.fan", "on": True}, CTX)
    assert result.success and sent == [("shed", "gpio_switch", {"device": "fan", "on": True})]
    action = tool.describe_action({"device": "shed.fan", "on": True})
    assert action is not None and action.device == "shed.fan" and action.operation == "write"
    assert action.peripheral == "fleet:shed" and not action.requires_approval
    assert action.summary == "switch shed.fan on (node shed decides)" and action.value == 1.0
    assert (await tool.execute({"device": "pump", "on": True}, CTX)).output == "local pump"
    assert local.calls == [{"device": "pump", "on": True}] and len(sent) == 1
    # A name no node has: the local tool answers (it names its devices).
    barn = await registry.get("gpio_switch").execute({"device": "barn.fan", "on": 1}, CTX)  # type: ignore[union-attr]
    assert local.calls[-1]["device"] == "barn.fan" and len(sent) == 1
    assert barn.success  # our fake local tool accepts anything; real ones refuse


async def test_remote_only_tools_exist_without_local_devices() -> None:
    remote = RemoteDevices()
    registry = build(None, remote)
    assert registry.specs() == ()
    shed(remote, ("fan", "relay"))
    tool = registry.get("gpio_switch")
    assert tool is not None and enum(registry, "gpio_switch") == ["shed.fan"]
    result = await tool.execute({"device": "pump", "on": True}, CTX)
    assert not result.success and "can use: shed.fan" in str(result.error)
    action = tool.describe_action({"device": "pump", "on": True})
    assert action is not None and not action.allowed


def test_the_name_rule_local_names_win_and_the_own_node_is_not_remote() -> None:
    # A plugin's local device with a dot in its name wins over the remote one of that name.
    remote = RemoteDevices(own_node="greenhouse")
    registry = build(LocalSwitch("shed.fan", "shed"), remote)
    shed(remote, ("fan", "relay"), ("heater", "relay"))
    # A node named like a local device ("shed") is no clash: remote names always hold a dot.
    assert enum(registry, "gpio_switch") == ["shed.fan", "shed", "shed.heater"]
    tool = registry.get("gpio_switch")
    assert tool is not None
    action = tool.describe_action({"device": "shed.fan", "on": True})
    assert action is not None and action.peripheral == ""  # the local tool described it
    # This node's own description never becomes remote entries.
    remote.set_node("greenhouse", [RemoteDevice("greenhouse", "pump", "relay")], [])
    assert "greenhouse.pump" not in enum(registry, "gpio_switch")


def test_the_remote_entries_are_bounded(caplog: pytest.LogCaptureFixture) -> None:
    remote = RemoteDevices(limit=5)
    registry = build(LocalSwitch("pump"), remote)
    for n in range(4):
        remote.set_node(f"n{n}", [RemoteDevice(f"n{n}", f"d{i}", "relay") for i in range(3)], [])
    assert enum(registry, "gpio_switch") == ["pump", "n0.d0", "n0.d1", "n0.d2", "n1.d0", "n1.d1"]
    assert "max_remote_entries" in caplog.text
    revision = remote.revision
    remote.set_node("n3", [RemoteDevice("n3", "d0", "relay")], [])  # beyond the limit anyway
    assert remote.revision == revision  # nothing listed changed: schemas stay cached


class LocalStatus(BaseTool):
    """A local hardware_status (what the GPIO peripherals build)."""

    name = "hardware_status"
    description = "List the wired devices."
    risk = RiskClass.READ
    parameters: Mapping[str, Any] = {"type": "object", "properties": {}}

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        return ToolResult.ok("pump: relay on GPIO17, off", [{"device": "pump"}])


async def test_hardware_status_lists_other_nodes_devices_and_which_ask_a_person() -> None:
    remote = RemoteDevices()
    registry = ToolRegistry()
    local = LocalStatus()
    registry.register(local)
    for tool in fleet_tools({"hardware_status": local}, remote):
        registry.register_or_replace(tool)
    status = registry.get("hardware_status")
    assert status is not None
    alone = await status.execute({}, CTX)
    assert alone.output == "pump: relay on GPIO17, off", "no node known: this node's only"
    remote.set_node(
        "shed",
        [RemoteDevice("shed", "fan", "relay"), RemoteDevice("shed", "heater", "relay", True)],
        [RemoteSensor("shed", "air", {"temperature": "°C", "humidity": "%"})],
    )
    result = await status.execute({}, CTX)
    assert result.success and result.data == [{"device": "pump"}]
    assert result.output.splitlines() == [
        "pump: relay on GPIO17, off",
        "Other nodes' devices (state not known here: gpio_read asks their node):",
        "shed.fan: relay",
        "shed.heater: relay, asks a person on shed first",
        "Other nodes' sensors (sensor_read asks their node):",
        "shed.air: temperature °C, humidity %",
    ]
    spec = next(s for s in registry.specs() if s.name == "hardware_status")
    assert "whether their node asks a person first" in spec.description


async def test_hardware_status_is_offered_for_other_nodes_alone() -> None:
    remote = RemoteDevices()
    registry = ToolRegistry()
    for tool in fleet_tools({}, remote):
        registry.register_or_replace(tool)
    assert "hardware_status" not in [s.name for s in registry.specs()], "nothing to list yet"
    shed(remote, ("fan", "relay"))
    assert "hardware_status" in [s.name for s in registry.specs()]
    status = registry.get("hardware_status")
    assert status is not None
    assert (await status.execute({}, CTX)).output.splitlines()[1] == "shed.fan: relay"

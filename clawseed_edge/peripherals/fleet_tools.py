"""The device tools with other nodes' devices in their enums: ``gpio_switch`` of ``shed.fan``.

The model keeps one short tool list however many nodes there are: :func:`fleet_tools` wraps each
device tool this node has (``gpio_switch`` ...) in a :class:`FleetDeviceTool` whose enum adds the
remote devices of the kinds it works on, and adds the tool when only other nodes have such
devices. A call to a local name runs the local tool, unchanged; a call to ``<node>.<name>``
travels to that node (:meth:`~clawseed_edge.api.RemoteDevices.call`), whose own SecurityPolicy
and approvals decide. This node's policy still applies its own rules to the call (autonomy,
read_only, rates per session): a read-only agent switches nothing anywhere.

The schemas follow :class:`~clawseed_edge.api.RemoteDevices` (``schema_revision``): the
registry rebuilds them when a node's description arrives or leaves.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from clawseed_edge.api import (
    DeviceAction,
    RemoteDevice,
    RemoteDevices,
    RemoteSensor,
    RiskClass,
    Tool,
    ToolContext,
    ToolResult,
    ToolSpec,
)

from .wired.kinds import KIND_SPECS

__all__ = ["FLEET_DEVICE_TOOLS", "FleetDeviceTool", "FleetHardwareStatus", "fleet_tools"]


@dataclass(frozen=True, slots=True)
class _Entry:
    argument: str  # "device" or "sensor"
    kinds: frozenset[str]  # device kinds it works on (empty for sensors)
    risk: RiskClass
    description: str
    extra: Mapping[str, Any]  # the other properties of its schema
    verb: str


def _kinds(can: Any) -> frozenset[str]:
    return frozenset(name for name, spec in KIND_SPECS.items() if can(spec))


_SWITCH = _kinds(lambda s: s.switch)
_ON = {"on": {"type": "boolean", "description": "true switches on, false off."}}
_LEVEL = {"level": {"type": "number", "description": "The level (the owning node checks it)."}}

#: The tools that reach other nodes' devices, and what each needs to exist without a local one.
FLEET_DEVICE_TOOLS: Mapping[str, _Entry] = {
    "gpio_switch": _Entry(
        "device",
        _SWITCH,
        RiskClass.ACT,
        "Switch a device (LED, relay, buzzer, output) on or off.",
        _ON,
        "switch",
    ),
    "gpio_toggle": _Entry(
        "device", _SWITCH, RiskClass.ACT, "Toggle a device: on if off, off if on.", {}, "toggle"
    ),
    "gpio_set_level": _Entry(
        "device",
        _kinds(lambda s: s.level),
        RiskClass.ACT,
        "Set the level of a dimmable device or the position of a servo.",
        _LEVEL,
        "set the level of",
    ),
    "gpio_read": _Entry(
        "device",
        frozenset(KIND_SPECS),
        RiskClass.READ,
        "Read a device: whether a button is pressed, an input active, an output on.",
        {},
        "read",
    ),
    "sensor_read": _Entry(
        "sensor",
        frozenset(),
        RiskClass.READ,
        "Read a sensor (temperature, humidity, pressure, light ...) with units and time.",
        {},
        "read",
    ),
}

_REMOTE_NOTE = " Devices of other nodes are named <node>.<name>; their own node decides."


class FleetDeviceTool:
    """One device tool whose enum also lists other nodes' devices (or sensors).

    Args:
        name: One of :data:`FLEET_DEVICE_TOOLS`.
        local: This node's tool of that name, or None when only other nodes have such devices.
        remote: The other nodes' devices (filled by the MQTT channel).
    """

    def __init__(self, name: str, local: Tool | None, remote: RemoteDevices) -> None:
        self.name = name
        self._entry = FLEET_DEVICE_TOOLS[name]
        self._local = local
        self._remote = remote
        self.risk = local.risk if local is not None else self._entry.risk
        self.timeout_s: float | None = getattr(local, "timeout_s", None)
        self._cached: tuple[int, ToolSpec] | None = None

    @property
    def schema_revision(self) -> int:
        """Grows when the remote entries change (the registry rebuilds the schema then)."""
        return self._remote.revision

    @property
    def offered(self) -> bool:
        """False while neither this node nor a known node has a device for it (left out of
        the tool list then, rather than offered with an empty enum)."""
        return self._local is not None or bool(self._targets())

    # --- what the model is told ------------------------------------------------------------

    @property
    def description(self) -> str:
        return self.spec().description

    @property
    def parameters(self) -> Mapping[str, Any]:
        return self.spec().parameters

    def spec(self) -> ToolSpec:
        cached = self._cached
        if cached is not None and cached[0] == self._remote.revision:
            return cached[1]
        local_names = self._local_names()
        remote_names = [n for n in self._remote_names() if n not in local_names]
        if self._local is not None:
            base = self._local.spec()
            description, schema = base.description, copy.deepcopy(dict(base.parameters))
        else:
            description, schema = self._entry.description, self._bare_schema()
        prop = schema["properties"][self._entry.argument]
        prop["enum"] = [*local_names, *remote_names]
        if remote_names:
            description += _REMOTE_NOTE
            prop["description"] = (
                f"The {self._entry.argument}'s name; <node>.<name> on another node."
            )
        spec = ToolSpec(self.name, description, schema)
        self._cached = (self._remote.revision, spec)
        return spec

    def _bare_schema(self) -> dict[str, Any]:
        arg = self._entry.argument
        properties = {arg: {"type": "string", "enum": []}, **copy.deepcopy(dict(self._entry.extra))}
        return {
            "type": "object",
            "properties": properties,
            "required": [arg, *self._entry.extra],
            "additionalProperties": False,
        }

    def _local_names(self) -> list[str]:
        if self._local is None:
            return []
        prop = self._local.spec().parameters.get("properties", {}).get(self._entry.argument, {})
        return [str(n) for n in prop.get("enum", [])]

    def _remote_names(self) -> list[str]:
        return [t.full_name for t in self._targets()]

    def _targets(self) -> list[RemoteDevice] | list[RemoteSensor]:
        if self._entry.argument == "sensor":
            return list(self._remote.sensors())
        return [d for d in self._remote.devices() if d.kind in self._entry.kinds]

    def _target(self, arguments: Mapping[str, Any]) -> RemoteDevice | RemoteSensor | None:
        """The remote device the call names, or None (a local name, or nothing known)."""
        name = arguments.get(self._entry.argument)
        if not isinstance(name, str) or "." not in name or name in self._local_names():
            return None
        return next((t for t in self._targets() if t.full_name == name), None)

    # --- the call --------------------------------------------------------------------------

    def describe_action(self, arguments: Mapping[str, Any]) -> DeviceAction | None:
        target = self._target(arguments)
        if target is None:
            if self._local is not None:
                return self._local.describe_action(arguments)
            return DeviceAction(
                str(arguments.get(self._entry.argument, "?"))[:80],
                "unknown",
                "read" if self.risk is RiskClass.READ else "write",
                allowed=False,
                summary=self._unknown(arguments),
            )
        reads = self.risk is RiskClass.READ
        value: float | None = None
        what = ""
        if "on" in arguments:
            on = str(arguments.get("on")).strip().lower() in ("true", "on", "1")
            value, what = (1.0, " on") if on else (0.0, " off")
        elif isinstance(arguments.get("level"), int | float):
            value = float(arguments["level"])
            what = f" to {value:g}"
        # The device's caps, rates and approval are its owner's: this node's policy applies
        # its own rules (autonomy, read_only, session rates) and the owner decides the rest.
        return DeviceAction(
            target.full_name,
            target.kind if isinstance(target, RemoteDevice) else "sensor",
            "read" if reads else "write",
            value=value,
            summary=f"{self._entry.verb} {target.full_name}{what} (node {target.node} decides)",
            peripheral=f"fleet:{target.node}",
        )

    def describe_access(self, arguments: Mapping[str, Any]) -> Any:
        if self._local is None or self._target(arguments) is not None:
            return None
        return self._local.describe_access(arguments)

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        target = self._target(arguments)
        if target is None:
            if self._local is not None:
                return await self._local.execute(arguments, context)
            return ToolResult.fail(self._unknown(arguments))
        forwarded = dict(arguments)
        forwarded[self._entry.argument] = target.name  # the owner knows it by its own name
        return await self._remote.call(target.node, self.name, forwarded)

    def _unknown(self, arguments: Mapping[str, Any]) -> str:
        name = str(arguments.get(self._entry.argument, ""))[:80]
        names = ", ".join(self._remote_names()) or "none"
        return f"no {self._entry.argument} named {name!r}; {self.name} can use: {names}"


_STATUS_NOTE = (
    " Other nodes' devices and sensors are listed after this node's, with their kind and whether"
    " their node asks a person first; gpio_read or sensor_read asks their node for the state."
)
_NO_PARAMETERS: Mapping[str, Any] = {
    "type": "object",
    "properties": {},
    "additionalProperties": False,
}


class FleetHardwareStatus:
    """``hardware_status`` with the other nodes' devices and sensors after this node's.

    Their states are not known here (only their descriptions are: name, kind, whether their
    node asks a person first): the listing says so, and ``gpio_read`` / ``sensor_read`` ask the
    owner. This node's part is its own ``hardware_status``, unchanged.

    Args:
        local: This node's ``hardware_status``, or None when it has no wired devices.
        remote: The other nodes' devices (filled by the MQTT channel).
    """

    name = "hardware_status"
    risk = RiskClass.READ

    def __init__(self, local: Tool | None, remote: RemoteDevices) -> None:
        self._local = local
        self._remote = remote
        self.timeout_s: float | None = getattr(local, "timeout_s", None)

    @property
    def schema_revision(self) -> int:
        return self._remote.revision

    @property
    def offered(self) -> bool:
        """False while there is nothing to list, here or on a known node."""
        return self._local is not None or bool(self._remote.devices() or self._remote.sensors())

    @property
    def description(self) -> str:
        if self._local is None:
            return "List the other nodes' devices and sensors." + _STATUS_NOTE
        return self._local.description + _STATUS_NOTE

    @property
    def parameters(self) -> Mapping[str, Any]:
        return self._local.parameters if self._local is not None else _NO_PARAMETERS

    def spec(self) -> ToolSpec:
        return ToolSpec(self.name, self.description, self.parameters)

    def describe_action(self, arguments: Mapping[str, Any]) -> DeviceAction | None:
        return self._local.describe_action(arguments) if self._local is not None else None

    def describe_access(self, arguments: Mapping[str, Any]) -> Any:
        return self._local.describe_access(arguments) if self._local is not None else None

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        lines = self._remote_lines()
        if self._local is None:
            return ToolResult.ok("\n".join(lines or ["No devices, here or on another node."]))
        result = await self._local.execute(arguments, context)
        if not result.success or not lines:
            return result
        return ToolResult.ok("\n".join([result.output, *lines]), result.data)

    def _remote_lines(self) -> list[str]:
        devices, sensors = self._remote.devices(), self._remote.sensors()
        lines: list[str] = []
        if devices:
            lines.append("Other nodes' devices (state not known here: gpio_read asks their node):")
            for d in devices:
                ask = f", asks a person on {d.node} first" if d.approval else ""
                lines.append(f"{d.full_name}: {d.kind}{ask}")
        if sensors:
            lines.append("Other nodes' sensors (sensor_read asks their node):")
            for sensor in sensors:
                units = ", ".join(f"{q} {u}".rstrip() for q, u in sensor.quantities.items())
                lines.append(f"{sensor.full_name}: {units or 'sensor'}")
        return lines


def fleet_tools(local: Mapping[str, Tool], remote: RemoteDevices) -> list[Tool]:
    """The device tools wrapped so that their enums hold other nodes' devices too, and
    ``hardware_status`` listing those devices and sensors after this node's.

    Args:
        local: This node's tools by name (those of :data:`FLEET_DEVICE_TOOLS` are wrapped).
        remote: The other nodes' devices; a tool that no local device needs is added as well
            (its enum stays empty until a node with such a device is heard of).
    """
    # A Tool whose description and parameters are read-only properties (they follow
    # ``remote``): the protocol declares plain attributes, hence the cast.
    tools = [cast(Tool, FleetDeviceTool(n, local.get(n), remote)) for n in FLEET_DEVICE_TOOLS]
    return [*tools, cast(Tool, FleetHardwareStatus(local.get("hardware_status"), remote))]

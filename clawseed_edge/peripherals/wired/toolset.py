"""The whole GPIO tool set: the per-device tools plus ``hardware_status``, over many ports."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from clawseed_edge.api import (
    BaseTool,
    ClawseedError,
    DeviceAction,
    RiskClass,
    Tool,
    ToolContext,
    ToolResult,
)

from .maker_tools import GpioPlayNote, GpioSetColour
from .port import DeviceRoutes, GpioPort
from .tools import GpioBlink, GpioRead, GpioSetLevel, GpioSwitch, GpioToggle

__all__ = ["HardwareStatus", "build_tools", "share_gpio_tools"]


class HardwareStatus(BaseTool):
    """List every device of every peripheral with its kind, pin and current state."""

    name = "hardware_status"
    description = "List the wired devices with their kind, pin and current state."
    risk = RiskClass.READ
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
    }

    def __init__(self, routes: DeviceRoutes) -> None:
        self._routes = routes

    def describe_action(self, arguments: Mapping[str, Any]) -> DeviceAction:
        # Not one device: whole boards are read. ``device`` names the peripheral(s).
        names = ", ".join(p.name for p in self._routes.ports)
        boards = ", ".join(p.board_type for p in self._routes.ports)
        return DeviceAction(
            device=names,
            kind="board",
            operation="read",
            summary=f"read the state of every device on {boards}",
            peripheral=names,
        )

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        states: list[dict[str, Any]] = []
        lines: list[str] = []
        several = len(self._routes.ports) > 1
        for port in self._routes.ports:
            try:
                await port.refresh()  # inputs read now; every state arrives through the feed
            except ClawseedError as exc:
                return ToolResult.fail(str(exc))
            for state in [s.as_dict() for s in port.states.devices()]:
                route = self._routes.get(state["device"])
                described = route[1].spec.describe(state["value"]) if route else str(state["value"])
                where = f" ({port.name})" if several else ""
                lines.append(
                    f"{state['device']}: {state['kind']} on {state['pin']}{where}, {described}"
                )
                states.append(state)
        if not states:
            return ToolResult.ok("No devices are wired.", [])
        return ToolResult.ok("\n".join(lines), states)


def build_tools(ports: Sequence[GpioPort]) -> list[Tool]:
    """One tool set for the devices of ``ports``; a tool with no eligible device is left out.

    Raises:
        ConfigInvalid: Two ports have a device of the same name.
    """
    routes = DeviceRoutes(ports)
    tools: list[Tool] = []
    for cls in (
        GpioSwitch,
        GpioToggle,
        GpioSetLevel,
        GpioRead,
        GpioBlink,
        GpioPlayNote,
        GpioSetColour,
    ):
        tool = cls(routes)
        if tool.devices:
            tools.append(tool)
    tools.append(HardwareStatus(routes))
    return tools


def share_gpio_tools(peripherals: Sequence[object]) -> list[Tool]:
    """Make the GPIO peripherals among ``peripherals`` share one tool set; returns it.

    The first port carries the set (its ``tools()`` returns it) and the others return none, so
    an agent that registers every peripheral's tools registers each tool once. With fewer than
    two ports nothing changes (a lone peripheral keeps its own tools) and the result is empty.

    Raises:
        ConfigInvalid: Two peripherals have a device of the same name.
    """
    ports = [p for p in peripherals if isinstance(p, GpioPort)]
    if len(ports) < 2:
        return []
    tools = build_tools(ports)
    for i, port in enumerate(ports):
        port.share_tools(tools if i == 0 else [])
    return tools

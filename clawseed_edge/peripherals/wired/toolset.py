"""The whole GPIO tool set: the per-device tools plus ``hardware_status``, over many ports."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from clawseed_edge.api import (
    BaseTool,
    ClawseedError,
    DeviceAction,
    RiskClass,
    SensorReading,
    StateFeed,
    StateSource,
    Tool,
    ToolContext,
    ToolResult,
)

from .kinds import KIND_SPECS
from .port import DeviceRoutes, GpioPort
from .tools import GpioBlink, GpioRead, GpioSetLevel, GpioSwitch, GpioToggle

__all__ = ["HardwareStatus", "build_tools", "share_gpio_tools", "share_readings"]


#: Sensors ``hardware_status`` lists at most (the rest are counted).
MAX_READINGS = 32


class HardwareStatus(BaseTool):
    """List every device of every peripheral with its kind, pin and current state, and the
    latest sensor readings published on the feeds given to :meth:`read_from` (never read now:
    the sampler and ``sensor_read`` publish them)."""

    name = "hardware_status"
    description = (
        "List the wired devices with their kind, pin and current state, and each sensor's "
        "latest reading with its age."
    )
    risk = RiskClass.READ
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
    }

    def __init__(self, routes: DeviceRoutes, clock: Callable[[], float] = time.time) -> None:
        self._routes = routes
        self._feeds: list[StateFeed] = []
        self._clock = clock

    def read_from(self, feeds: Sequence[StateFeed]) -> None:
        """List the latest sensor readings published on ``feeds`` (a sensor bank's ``states``)."""
        self._feeds = list(feeds)

    def _reading_lines(self) -> list[str]:
        feeds = [p.states for p in self._routes.ports] + self._feeds
        readings = [r for feed in feeds for r in feed.readings()]
        if not readings and not self._feeds:
            return []
        if not readings:
            return ["Sensors: no reading yet (sensor_read reads one now)."]
        now = self._clock()
        lines = ["Sensors (latest readings, not read now):"]
        for r in readings[:MAX_READINGS]:
            lines.append(reading_line(r, now))
        if len(readings) > MAX_READINGS:
            lines.append(f"... and {len(readings) - MAX_READINGS} more sensors")
        return lines

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
            lines.append("No devices are wired.")
        lines.extend(self._reading_lines())
        return ToolResult.ok("\n".join(lines), states)


def _age(seconds: float) -> str:
    seconds = max(0.0, seconds)
    if seconds < 90:
        return f"{seconds:.0f} s ago"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min ago"
    if seconds < 172800:
        return f"{seconds / 3600:.0f} h ago"
    return f"{seconds / 86400:.0f} days ago"


def reading_line(reading: SensorReading, now: float) -> str:
    """``greenhouse: temperature 21.5 °C, humidity 40 %RH (read 12 s ago)``."""
    age = _age(now - reading.time)
    if not reading.ok:
        return f"{reading.sensor}: the last read failed ({age}): {reading.error[:200]}"
    values = ", ".join(
        f"{q} {v:.4g} {reading.units.get(q, '')}".rstrip() for q, v in reading.values.items()
    )
    return f"{reading.sensor}: {values or 'no values'} (read {age})"


def build_tools(ports: Sequence[GpioPort]) -> list[Tool]:
    """One tool set for the devices of ``ports``; a tool with no eligible device is left out.

    Raises:
        ConfigInvalid: Two ports have a device of the same name.
    """
    routes = DeviceRoutes(ports)
    tools: list[Tool] = []
    classes: list[Callable[[DeviceRoutes], Any]] = [
        GpioSwitch,
        GpioToggle,
        GpioSetLevel,
        GpioRead,
        GpioBlink,
    ]
    specs = [KIND_SPECS.get(d.kind) for d in routes.devices()]
    if any(s is not None and (s.tone or s.colour) for s in specs):
        # A buzzer or an RGB LED is wired: their tools (and note and colour parsing) load now.
        from .maker_tools import GpioPlayNote, GpioSetColour

        classes += [GpioPlayNote, GpioSetColour]
    for cls in classes:
        tool = cls(routes)
        if tool.devices:
            tools.append(tool)
    tools.append(HardwareStatus(routes))
    return tools


def share_readings(peripherals: Sequence[object]) -> None:
    """Give the ``hardware_status`` tool of the GPIO peripherals among ``peripherals`` the
    state feeds of the others (a sensor bank), so it lists their latest readings."""
    feeds = [
        p.states for p in peripherals if isinstance(p, StateSource) and not isinstance(p, GpioPort)
    ]
    if not feeds:
        return
    for port in (p for p in peripherals if isinstance(p, GpioPort)):
        for tool in getattr(port, "tools", list)():
            if isinstance(tool, HardwareStatus):
                tool.read_from(feeds)


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

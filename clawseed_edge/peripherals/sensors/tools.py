"""The sensor tools the model calls: sensor_read, i2c_scan, display_show, raw register access.

Each tool exists only when something it can act on is configured, and its schema enumerates the
configured names, so a small model sees few tools with closed choices. Each describes its call
(``describe_action``) for the SecurityPolicy: reads are ``read`` operations; a display write and
a raw register write are ``write`` operations (the raw write's risk class is ``dangerous``: it
can reconfigure or brick a chip).
"""

from __future__ import annotations

from collections.abc import Mapping
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

from .config import ADDRESS_RANGE
from .port import SensorPort

__all__ = [
    "DisplayShow",
    "I2CReadRegister",
    "I2CScan",
    "I2CWriteRegister",
    "SensorRead",
    "build_sensor_tools",
]


def _int(value: Any) -> int | None:
    """An integer from JSON (``118``) or text (``"0x76"``, ``"118"``); None if it is not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip(), 0)
        except ValueError:
            return None
    return None


class _BankTool(BaseTool):
    def __init__(self, bank: SensorPort) -> None:
        self._bank = bank
        self.parameters = self._schema()

    def _schema(self) -> dict[str, Any]:
        raise NotImplementedError

    def _name_arg(self, arguments: Mapping[str, Any], key: str, allowed: list[str]) -> str | None:
        value = arguments.get(key)
        if isinstance(value, str) and value in allowed:
            return value
        return None


class SensorRead(_BankTool):
    """Read a sensor: every value with its unit and the time read."""

    name = "sensor_read"
    description = (
        "Read a sensor (temperature, humidity, pressure, light, voltage ...). Returns each value "
        "with its unit and the time it was read."
    )
    risk = RiskClass.READ

    def _schema(self) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {
                "sensor": {
                    "type": "string",
                    "enum": self._bank.sensor_names(),
                    "description": "The sensor's configured name.",
                }
            },
            "required": ["sensor"],
            "additionalProperties": False,
        }

    def describe_action(self, arguments: Mapping[str, Any]) -> DeviceAction:
        names = self._bank.sensor_names()
        sensor = self._name_arg(arguments, "sensor", names)
        if sensor is None:
            return DeviceAction(
                str(arguments.get("sensor", "?")),
                "sensor",
                "read",
                allowed=False,
                summary=f"'sensor' must be one of: {', '.join(names)}",
            )
        driver = self._bank.sensor(sensor).config.driver
        return DeviceAction(sensor, driver, "read", summary=f"read {sensor} ({driver})")

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        names = self._bank.sensor_names()
        sensor = self._name_arg(arguments, "sensor", names)
        if sensor is None:
            return ToolResult.fail(
                f"no sensor named {arguments.get('sensor')!r}; sensors: {', '.join(names)}"
            )
        try:
            reading = await self._bank.read(sensor)
        except ClawseedError as exc:
            return ToolResult.fail(str(exc))
        text, data = reading.text(), reading.as_data()
        feeds = getattr(self._bank, "feeds", None)
        shown = feeds.filtered(sensor) if feeds is not None else None
        if shown is not None:
            # This read is raw; history, charts and Home Assistant show the filtered value.
            values = ", ".join(
                f"{q} {v:.{reading.decimals.get(q, 1)}f} {shown.units.get(q, '')}".rstrip()
                for q, v in shown.values.items()
            )
            text += f"; after the filters (what history and every screen show): {values}"
            data["filtered"] = dict(shown.values)
        return ToolResult.ok(text, data=data)


class I2CScan(_BankTool):
    """List the addresses that answer on an I2C bus."""

    name = "i2c_scan"
    description = "List the I2C addresses that answer on a bus (to find a chip or check wiring)."
    risk = RiskClass.READ

    def _schema(self) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {
                "bus": {
                    "type": "integer",
                    "enum": self._bank.bus_numbers(),
                    "description": "The bus number N of /dev/i2c-N.",
                },
            },
            "required": [],
            "additionalProperties": False,
        }

    def describe_action(self, arguments: Mapping[str, Any]) -> DeviceAction:
        return DeviceAction(f"i2c-{self._pick_bus(arguments)}", "i2c_bus", "read", summary="scan")

    def _pick_bus(self, arguments: Mapping[str, Any]) -> int | None:
        bus = _int(arguments.get("bus"))
        buses = self._bank.bus_numbers()
        if bus is None and len(buses) == 1:
            return buses[0]
        return bus if bus in buses else None

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        bus = self._pick_bus(arguments)
        if bus is None:
            return ToolResult.fail(f"'bus' must be one of: {self._bank.bus_numbers()}")
        try:
            found = await self._bank.scan(bus)
        except ClawseedError as exc:
            return ToolResult.fail(str(exc))
        known = {
            v.address: v.name
            for n in self._bank.sensor_names() + self._bank.display_names()
            if (v := self._bank.sensor(n)).address is not None and v.config.bus == bus
        }
        parts = [f"0x{a:02x}" + (f" ({known[a]})" if a in known else "") for a in found]
        missing = [f"{name} (0x{a:02x})" for a, name in known.items() if a not in found]
        text = f"I2C bus {bus}: " + (", ".join(parts) if parts else "no device answers")
        if missing:
            text += f". Configured but not answering: {', '.join(missing)}"
        return ToolResult.ok(text, data={"bus": bus, "addresses": found})


class _RegisterTool(_BankTool):
    def _base_properties(self) -> dict[str, Any]:
        return {
            "bus": {"type": "integer", "enum": self._bank.bus_numbers()},
            "address": {
                "type": "integer",
                "minimum": 3,
                "maximum": 0x77,
                "description": "7-bit address (0x03..0x77).",
            },
            "register": {"type": "integer", "minimum": 0, "maximum": 255},
        }

    def _target(self, arguments: Mapping[str, Any]) -> tuple[int, int, int] | str:
        bus, address, register = (_int(arguments.get(k)) for k in ("bus", "address", "register"))
        buses = self._bank.bus_numbers()
        if bus is None and len(buses) == 1:
            bus = buses[0]
        if bus not in buses:
            return f"'bus' must be one of: {buses}"
        if address is None or address not in ADDRESS_RANGE:
            return "'address' must be a 7-bit address 0x03..0x77"
        if register is None or not 0 <= register <= 255:
            return "'register' must be 0..255"
        assert bus is not None
        return bus, address, register


class I2CReadRegister(_RegisterTool):
    """Read raw bytes from a chip's register (enabled by ``[i2c] raw_access``)."""

    name = "i2c_read_register"
    description = "Read 1..32 raw bytes from a register of an I2C chip (for debugging a chip)."
    risk = RiskClass.READ

    def _schema(self) -> dict[str, Any]:
        props = self._base_properties()
        props["length"] = {"type": "integer", "minimum": 1, "maximum": 32}
        return {
            "type": "object",
            "properties": props,
            "required": ["address", "register"],
            "additionalProperties": False,
        }

    def describe_action(self, arguments: Mapping[str, Any]) -> DeviceAction:
        target = self._target(arguments)
        if isinstance(target, str):
            return DeviceAction("i2c", "i2c_register", "read", allowed=False, summary=target)
        bus, address, register = target
        return DeviceAction(
            f"i2c-{bus}@0x{address:02x}",
            "i2c_register",
            "read",
            summary=f"read register 0x{register:02x} of 0x{address:02x}",
        )

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        target = self._target(arguments)
        if isinstance(target, str):
            return ToolResult.fail(target)
        bus, address, register = target
        length = _int(arguments.get("length", 1)) or 0
        try:
            data = await self._bank.read_register(bus, address, register, length)
        except ClawseedError as exc:
            return ToolResult.fail(str(exc))
        hexes = " ".join(f"{b:02x}" for b in data)
        return ToolResult.ok(f"0x{address:02x} register 0x{register:02x}: {hexes}", data=data)


class I2CWriteRegister(_RegisterTool):
    """Write raw bytes to a chip's register: risk class dangerous."""

    name = "i2c_write_register"
    description = "Write 1..32 raw bytes to a register of an I2C chip. Can reconfigure the chip."
    risk = RiskClass.DANGEROUS

    def _schema(self) -> dict[str, Any]:
        props = self._base_properties()
        props["data"] = {
            "type": "array",
            "minItems": 1,
            "maxItems": 32,
            "items": {"type": "integer", "minimum": 0, "maximum": 255},
        }
        return {
            "type": "object",
            "properties": props,
            "required": ["address", "register", "data"],
            "additionalProperties": False,
        }

    def _data(self, arguments: Mapping[str, Any]) -> list[int] | None:
        raw = arguments.get("data")
        if isinstance(raw, int | str) and not isinstance(raw, bool):
            raw = [raw]
        if not isinstance(raw, list) or not 1 <= len(raw) <= 32:
            return None
        data = [_int(b) for b in raw]
        if any(b is None or not 0 <= b <= 255 for b in data):
            return None
        return [b for b in data if b is not None]

    def describe_action(self, arguments: Mapping[str, Any]) -> DeviceAction:
        target = self._target(arguments)
        data = self._data(arguments)
        if isinstance(target, str) or data is None:
            why = target if isinstance(target, str) else "'data' must be 1..32 bytes 0..255"
            return DeviceAction("i2c", "i2c_register", "write", allowed=False, summary=why)
        bus, address, register = target
        hexes = " ".join(f"{b:02x}" for b in data)
        return DeviceAction(
            f"i2c-{bus}@0x{address:02x}",
            "i2c_register",
            "write",
            summary=f"write {hexes} to register 0x{register:02x} of 0x{address:02x} on bus {bus}",
        )

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        target = self._target(arguments)
        data = self._data(arguments)
        if isinstance(target, str):
            return ToolResult.fail(target)
        if data is None:
            return ToolResult.fail("'data' must be a list of 1..32 bytes, each 0..255")
        bus, address, register = target
        try:
            await self._bank.write_register(bus, address, register, data)
        except ClawseedError as exc:
            return ToolResult.fail(str(exc))
        return ToolResult.ok(
            f"wrote {len(data)} bytes to register 0x{register:02x} of 0x{address:02x}"
        )


class DisplayShow(_BankTool):
    """Show text on a display."""

    name = "display_show"
    description = "Show text on a display (a newline starts a new line; long lines wrap)."
    risk = RiskClass.ACT

    def _schema(self) -> dict[str, Any]:
        names = self._bank.display_names()
        return {
            "type": "object",
            "properties": {
                "display": {"type": "string", "enum": names},
                "text": {
                    "type": "string",
                    "maxLength": 200,
                    "description": "What to show, e.g. '21.5°C 40%RH'.",
                },
            },
            "required": ["text"],
            "additionalProperties": False,
        }

    def _display(self, arguments: Mapping[str, Any]) -> str | None:
        names = self._bank.display_names()
        if "display" not in arguments and len(names) == 1:
            return names[0]
        return self._name_arg(arguments, "display", names)

    def describe_action(self, arguments: Mapping[str, Any]) -> DeviceAction:
        display = self._display(arguments)
        if display is None:
            return DeviceAction(
                str(arguments.get("display", "?")),
                "display",
                "write",
                allowed=False,
                summary="unknown display",
            )
        text = str(arguments.get("text", ""))[:40]
        return DeviceAction(display, "display", "write", summary=f"show {text!r} on {display}")

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        display = self._display(arguments)
        text = arguments.get("text")
        if display is None:
            return ToolResult.fail(f"'display' must be one of: {self._bank.display_names()}")
        if not isinstance(text, str) or len(text) > 200:
            return ToolResult.fail("'text' must be a string of at most 200 characters")
        try:
            lines = await self._bank.show(display, text)
        except ClawseedError as exc:
            return ToolResult.fail(str(exc))
        return ToolResult.ok(f"{display} shows: " + " | ".join(lines), data=lines)


def build_sensor_tools(bank: SensorPort) -> list[Tool]:
    """The tools for what ``bank`` has configured (none for what it does not)."""
    tools: list[Tool] = []
    if bank.sensor_names():
        tools.append(SensorRead(bank))
    if bank.bus_numbers():
        tools.append(I2CScan(bank))
        if bank.settings.raw_access:
            tools.extend([I2CReadRegister(bank), I2CWriteRegister(bank)])
    if bank.display_names():
        tools.append(DisplayShow(bank))
    return tools

"""The GPIO tools the model calls: switch, toggle, set level, read, blink, status.

One tool set spans every peripheral with pin devices (:class:`~.port.GpioPort`): device names
are unique across the config, so a tool routes a call by its ``device`` argument, and the model
sees one short list of tools whatever the number of boards. Each tool's schema enumerates only the configured devices that allow its action, and each tool
describes a call (``describe_action``) so that the SecurityPolicy can enforce the pin policy
without importing this package. The tools check their arguments again themselves (defence in
depth): an unknown device or a value out of range is a failed result naming the device and the
allowed range, never an exception.
"""

from __future__ import annotations

from collections.abc import Awaitable, Mapping
from typing import Any, ClassVar

from clawseed_edge.api import (
    BaseTool,
    ClawseedError,
    DeviceAction,
    RiskClass,
    ToolContext,
    ToolResult,
)

from .kinds import BLINK_LIMITS, KIND_SPECS
from .port import DeviceRoutes, GpioDeviceView, GpioPort

__all__ = [
    "GpioBlink",
    "GpioRead",
    "GpioSetLevel",
    "GpioSwitch",
    "GpioToggle",
]


def _kinds(can: Any) -> frozenset[str]:
    return frozenset(name for name, spec in KIND_SPECS.items() if can(spec))


SWITCH_KINDS = _kinds(lambda s: s.switch)
LEVEL_KINDS = _kinds(lambda s: s.level)
BLINK_KINDS = _kinds(lambda s: s.blink)
READ_KINDS = frozenset(KIND_SPECS)


class _GpioTool(BaseTool):
    """Shared parts: the device enum, device lookup and DeviceAction building."""

    kinds: ClassVar[frozenset[str]] = frozenset()
    operation: ClassVar[str] = "write"
    verb: ClassVar[str] = ""

    def __init__(self, routes: DeviceRoutes) -> None:
        self._routes = routes
        self.devices = [d.name for d in routes.devices() if d.kind in self.kinds]
        self.parameters = self._schema()

    def _schema(self) -> dict[str, Any]:
        raise NotImplementedError

    def _device_property(self) -> dict[str, Any]:
        return {
            "type": "string",
            "enum": list(self.devices),
            "description": "The device's configured name.",
        }

    def _lookup(self, arguments: Mapping[str, Any]) -> tuple[GpioDeviceView | None, str]:
        """(device, "") or (None, why the call cannot target a device)."""
        name = arguments.get("device")
        if not isinstance(name, str) or not name:
            return None, f"'device' must be one of: {', '.join(self.devices)}"
        route = self._routes.get(name)
        if route is None:
            return None, (
                f"no device named {name!r}; devices this tool can use: {', '.join(self.devices)}"
            )
        dev = route[1]
        if name not in self.devices:
            return None, (
                f"{name} is a {dev.kind}: {self.name} works on "
                f"{', '.join(sorted(self.kinds))} devices ({', '.join(self.devices)})"
            )
        return dev, ""

    def _port(self, dev: GpioDeviceView) -> GpioPort:
        route = self._routes.get(dev.name)
        assert route is not None  # _lookup found it
        return route[0]

    def _peripheral(self, arguments: Mapping[str, Any]) -> str:
        route = self._routes.get(str(arguments.get("device", "")))
        return route[0].name if route is not None else ""

    def _action(
        self,
        arguments: Mapping[str, Any],
        value: float | None,
        summary: str,
        error: str = "",
        *,
        repeats: int = 1,
        switches: int = 1,
    ) -> DeviceAction:
        dev, why = self._lookup(arguments)
        name = str(arguments.get("device", ""))
        op = "read" if self.operation == "read" else "write"
        if dev is None or error:
            return DeviceAction(
                device=name or "?",
                kind=dev.kind if dev else "unknown",
                operation=op,  # type: ignore[arg-type]
                value=value,
                allowed=False,
                summary=why or error,
                peripheral=self._peripheral(arguments),
            )
        cfg = dev.config
        lo, hi = cfg.level_range()
        writes = op == "write"
        return DeviceAction(
            device=dev.name,
            kind=dev.kind,
            operation=op,  # type: ignore[arg-type]
            value=value,
            requires_approval=cfg.approval and writes,
            max_per_minute=cfg.max_switches_per_minute if writes else None,
            min_value=lo if writes else None,
            max_value=hi if writes else None,
            summary=summary.format(name=dev.name, pin=dev.pin_name),
            peripheral=self._port(dev).name,
            switches=switches,
            repeats=repeats,
        )

    def _on_value(self, dev: GpioDeviceView | None) -> float:
        return dev.config.level_range()[1] if dev is not None else 1.0

    async def _guard(
        self, arguments: Mapping[str, Any]
    ) -> tuple[GpioDeviceView | None, ToolResult]:
        dev, why = self._lookup(arguments)
        return dev, ToolResult.fail(why)

    @staticmethod
    def _fail(exc: ClawseedError) -> ToolResult:
        return ToolResult.fail(str(exc))

    async def _value_result(
        self, dev: GpioDeviceView, operation: Awaitable[float | None], verb: str = "is now"
    ) -> ToolResult:
        """Await the port ``operation`` on ``dev`` and report the value it left (or its error)."""
        try:
            value = await operation
        except ClawseedError as exc:
            return self._fail(exc)
        text = f"{dev.name} ({dev.pin_name}) {verb} {self._describe_value(dev, value)}"
        return ToolResult.ok(text, {"device": dev.name, "value": value})

    @staticmethod
    def _describe_value(dev: GpioDeviceView, value: float | None) -> str:
        return dev.spec.describe(value)


def _parse_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("true", "on", "1", "false", "off", "0"):
        return value.strip().lower() in ("true", "on", "1")
    return None


def _parse_number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


class GpioSwitch(_GpioTool):
    """Switch an output on or off."""

    name = "gpio_switch"
    description = "Switch a device (LED, relay, buzzer, output) on or off."
    risk = RiskClass.ACT
    kinds = SWITCH_KINDS

    def _schema(self) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {
                "device": self._device_property(),
                "on": {"type": "boolean", "description": "true switches on, false off."},
            },
            "required": ["device", "on"],
            "additionalProperties": False,
        }

    def describe_action(self, arguments: Mapping[str, Any]) -> DeviceAction:
        on = _parse_bool(arguments.get("on"))
        dev, _ = self._lookup(arguments)
        if on is None:
            return self._action(arguments, None, "", "'on' must be true or false")
        value = self._on_value(dev) if on else 0.0
        return self._action(arguments, value, "switch {name} ({pin}) " + ("on" if on else "off"))

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        dev, failure = await self._guard(arguments)
        on = _parse_bool(arguments.get("on"))
        if dev is None:
            return failure
        if on is None:
            return ToolResult.fail("'on' must be true or false")
        return await self._value_result(dev, self._port(dev).switch(dev.name, on))


class GpioToggle(_GpioTool):
    """Switch an output to the opposite state."""

    name = "gpio_toggle"
    description = "Toggle a device: on if it is off, off if it is on."
    risk = RiskClass.ACT
    kinds = SWITCH_KINDS

    def _schema(self) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {"device": self._device_property()},
            "required": ["device"],
            "additionalProperties": False,
        }

    def describe_action(self, arguments: Mapping[str, Any]) -> DeviceAction:
        dev, _ = self._lookup(arguments)
        on = not (dev.value if dev is not None else 0)
        value = self._on_value(dev) if on else 0.0
        return self._action(arguments, value, "toggle {name} ({pin}) " + ("on" if on else "off"))

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        dev, failure = await self._guard(arguments)
        if dev is None:
            return failure
        return await self._value_result(dev, self._port(dev).toggle(dev.name))


class GpioSetLevel(_GpioTool):
    """Set a PWM level or a servo position."""

    name = "gpio_set_level"
    description = (
        "Set the level of a dimmable device (pwm_led: 0 = off .. 1 = full, capped per device) "
        "or the position of a servo (-1 .. 1, or degrees for a servo configured with angles)."
    )
    risk = RiskClass.ACT
    kinds = LEVEL_KINDS

    def _schema(self) -> dict[str, Any]:
        ranges = []
        lowest, highest = 0.0, 1.0
        for name in self.devices:
            route = self._routes.get(name)
            assert route is not None
            lo, hi = route[1].config.level_range()
            lowest, highest = min(lowest, lo), max(highest, hi)
            ranges.append(f"{name}: {lo:g}..{hi:g}")
        return {
            "type": "object",
            "properties": {
                "device": self._device_property(),
                "level": {
                    "type": "number",
                    "minimum": lowest,
                    "maximum": highest,
                    "description": "Allowed ranges: " + "; ".join(ranges) + ".",
                },
            },
            "required": ["device", "level"],
            "additionalProperties": False,
        }

    def describe_action(self, arguments: Mapping[str, Any]) -> DeviceAction:
        level = _parse_number(arguments.get("level"))
        if level is None:
            return self._action(arguments, None, "", "'level' must be a number")
        return self._action(arguments, level, "set {name} ({pin}) to level " + f"{level:g}")

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        dev, failure = await self._guard(arguments)
        if dev is None:
            return failure
        level = _parse_number(arguments.get("level"))
        if level is None:
            return ToolResult.fail("'level' must be a number")
        return await self._value_result(dev, self._port(dev).set_level(dev.name, level))


class GpioRead(_GpioTool):
    """Read a device's current value."""

    name = "gpio_read"
    description = "Read a device: whether a button is pressed, an input active, an output on."
    risk = RiskClass.READ
    kinds = READ_KINDS
    operation = "read"

    def _schema(self) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {"device": self._device_property()},
            "required": ["device"],
            "additionalProperties": False,
        }

    def describe_action(self, arguments: Mapping[str, Any]) -> DeviceAction:
        return self._action(arguments, None, "read {name} ({pin})")

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        dev, failure = await self._guard(arguments)
        if dev is None:
            return failure
        return await self._value_result(dev, self._port(dev).read(dev.name), "is")


class GpioBlink(_GpioTool):
    """Blink an output a few times in the background."""

    name = "gpio_blink"
    description = (
        "Blink a light or buzzer `count` times (on for on_ms, off for off_ms milliseconds); "
        "returns at once, the device ends off."
    )
    risk = RiskClass.ACT
    kinds = BLINK_KINDS

    def _schema(self) -> dict[str, Any]:
        (cmin, cmax), (omin, omax) = BLINK_LIMITS["count"], BLINK_LIMITS["on_ms"]
        return {
            "type": "object",
            "properties": {
                "device": self._device_property(),
                "count": {"type": "integer", "minimum": cmin, "maximum": cmax, "default": 3},
                "on_ms": {"type": "integer", "minimum": omin, "maximum": omax, "default": 500},
                "off_ms": {"type": "integer", "minimum": omin, "maximum": omax, "default": 500},
            },
            "required": ["device"],
            "additionalProperties": False,
        }

    @staticmethod
    def _args(arguments: Mapping[str, Any]) -> tuple[int, int, int] | str:
        out = []
        for key, default in (("count", 3), ("on_ms", 500), ("off_ms", 500)):
            raw = arguments.get(key, default)
            number = _parse_number(raw)
            if number is None or number != int(number):
                return f"{key!r} must be a whole number"
            lo, hi = BLINK_LIMITS[key]
            if not lo <= number <= hi:
                return f"{key} {number:g} is outside {lo}..{hi}"
            out.append(int(number))
        return out[0], out[1], out[2]

    def describe_action(self, arguments: Mapping[str, Any]) -> DeviceAction:
        dev, _ = self._lookup(arguments)
        parsed = self._args(arguments)
        if isinstance(parsed, str):
            return self._action(arguments, None, "", parsed)
        count, on_ms, off_ms = parsed
        summary = f"blink {{name}} ({{pin}}) {count} times ({on_ms} ms on, {off_ms} ms off)"
        # A blink switches on and off ``count`` times: the policy charges all of them.
        return self._action(
            arguments, self._on_value(dev), summary, repeats=count, switches=2 * count
        )

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        dev, failure = await self._guard(arguments)
        if dev is None:
            return failure
        parsed = self._args(arguments)
        if isinstance(parsed, str):
            return ToolResult.fail(parsed)
        count, on_ms, off_ms = parsed
        try:
            await self._port(dev).blink(dev.name, count, on_ms, off_ms)
        except ClawseedError as exc:
            return self._fail(exc)
        total = count * (on_ms + off_ms) / 1000
        return ToolResult.ok(
            f"{dev.name} ({dev.pin_name}) is blinking {count} times (about {total:g} s)",
            {"device": dev.name, "count": count},
        )

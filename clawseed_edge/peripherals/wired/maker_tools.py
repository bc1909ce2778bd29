"""Tools of the maker kinds: ``gpio_play_note`` (a tonal buzzer), ``gpio_set_colour`` (an RGB LED).

They route through the same device table as the other gpio_* tools and call the port's
``operate`` (a port without it, a board that has no such kinds, answers with a clear failure).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from clawseed_edge.api import ClawseedError, DeviceAction, RiskClass, ToolContext, ToolResult

from .colours import parse_colour, to_hex
from .notes import is_silence
from .tools import _GpioTool, _kinds

__all__ = ["GpioPlayNote", "GpioSetColour"]

TONE_KINDS = _kinds(lambda s: s.tone)
COLOUR_KINDS = _kinds(lambda s: s.colour)


class GpioPlayNote(_GpioTool):
    """Play a note on a passive buzzer, or silence it."""

    name = "gpio_play_note"
    description = (
        "Play a note on a passive buzzer until told otherwise: a note name ('A4', 'C#5', "
        "'Bb3'), a frequency in Hz (440), or 'off' for silence."
    )
    risk = RiskClass.ACT
    kinds = TONE_KINDS

    def _schema(self) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {
                "device": self._device_property(),
                "note": {
                    "type": ["string", "number"],
                    "description": "A note name ('A4', 'C#5'), Hz (440), or 'off'.",
                },
            },
            "required": ["device", "note"],
            "additionalProperties": False,
        }

    def describe_action(self, arguments: Mapping[str, Any]) -> DeviceAction:
        note = arguments.get("note")
        if note is None or isinstance(note, bool):
            return self._action(arguments, None, "", "'note' must be a note name, Hz or 'off'")
        silent = is_silence(note)
        return self._action(
            arguments,
            0.0 if silent else 1.0,
            "silence {name} ({pin})" if silent else "play " + str(note) + " on {name} ({pin})",
        )

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        dev, failure = await self._guard(arguments)
        if dev is None:
            return failure
        note = arguments.get("note")
        port = self._port(dev)
        operate = getattr(port, "operate", None)
        if operate is None:
            return ToolResult.fail(f"{port.name} cannot play notes")
        try:
            value = await operate(dev.name, "play", note)
        except ClawseedError as exc:
            return self._fail(exc)
        text = f"{dev.name} ({dev.pin_name}) is {self._describe_value(dev, value)}"
        if value is not None:
            text += f" ({note})"
        return ToolResult.ok(text, {"device": dev.name, "value": value, "note": note})


class GpioSetColour(_GpioTool):
    """Set the colour of an RGB LED."""

    name = "gpio_set_colour"
    description = (
        "Set an RGB LED's colour: a name ('purple', 'orange', 'off'), hex ('#ff8800') or "
        "[r, g, b] with 0..255."
    )
    risk = RiskClass.ACT
    kinds = COLOUR_KINDS

    def _schema(self) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {
                "device": self._device_property(),
                "colour": {
                    "type": ["string", "array"],
                    "description": "A colour name, '#rrggbb', or [r, g, b] (0..255).",
                },
            },
            "required": ["device", "colour"],
            "additionalProperties": False,
        }

    def describe_action(self, arguments: Mapping[str, Any]) -> DeviceAction:
        try:
            rgb = parse_colour(arguments.get("colour"))
        except ClawseedError as exc:
            return self._action(arguments, None, "", str(exc))
        return self._action(arguments, max(rgb), "set {name} ({pin}) to " + to_hex(rgb))

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        dev, failure = await self._guard(arguments)
        if dev is None:
            return failure
        port = self._port(dev)
        operate = getattr(port, "operate", None)
        if operate is None:
            return ToolResult.fail(f"{port.name} cannot set colours")
        try:
            rgb = parse_colour(arguments.get("colour"))
            await operate(dev.name, "set_colour", rgb)
        except ClawseedError as exc:
            return self._fail(exc)
        text = f"{dev.name} ({dev.pin_name}) now shows {to_hex(rgb)}"
        return ToolResult.ok(text, {"device": dev.name, "colour": list(rgb)})

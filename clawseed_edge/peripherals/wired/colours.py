"""Colours for an RGB LED: ``"purple"``, ``"dark orange"``, ``"#ff8800"``, ``"off"``, [r, g, b].

Parsed before anything reaches a pin, so a bad colour is an error that names the input and says
what is accepted. Names are the CSS colour names, through colorzero (which gpiozero depends on);
it is imported when a name is parsed.
"""

from __future__ import annotations

import re
from typing import Any

from clawseed_edge.api import ToolArgumentsInvalid

__all__ = ["parse_colour", "to_hex"]

_HEX = re.compile(r"^#?([0-9a-f]{3}|[0-9a-f]{6})$")
_OFF = frozenset({"off", "black", "none", "dark"})


def parse_colour(value: Any) -> tuple[float, float, float]:
    """(red, green, blue), each 0..1.

    Accepts a CSS colour name (any case, spaces allowed: ``"Dark Orange"``), hex (``"#f80"``,
    ``"ff8800"``), ``"off"``, or three numbers (0..255, or 0..1 when none is above 1).

    Raises:
        ToolArgumentsInvalid: Not a colour; the message says what is accepted.
    """
    if isinstance(value, list | tuple) and len(value) == 3:
        if all(isinstance(c, int | float) and not isinstance(c, bool) for c in value):
            scale = 255.0 if any(c > 1 for c in value) else 1.0
            r, g, b = (float(c) / scale for c in value)
            if all(0.0 <= c <= 1.0 for c in (r, g, b)):
                return r, g, b
    if isinstance(value, str):
        text = value.strip().lower()
        if text in _OFF:
            return (0.0, 0.0, 0.0)
        m = _HEX.match(text)
        spec = f"#{m.group(1)}" if m else re.sub(r"[\s_-]", "", text).replace("grey", "gray")
        from colorzero import Color

        try:
            r, g, b = Color(spec).rgb
        except ValueError:
            pass
        else:
            return float(r), float(g), float(b)
    raise ToolArgumentsInvalid(
        f"{value!r} is not a colour: use a name (red, purple, orange, teal ...), hex like "
        "'#ff8800', 'off', or [r, g, b] with 0..255"
    )


def to_hex(rgb: tuple[float, float, float]) -> str:
    """``"#800080"`` for (r, g, b) of 0..1."""
    return "#" + "".join(f"{round(c * 255):02x}" for c in rgb)

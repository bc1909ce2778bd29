"""Notes for a passive buzzer: ``"A4"``, ``"C#5"``, ``"Bb3"``, ``440`` or ``"440 Hz"``.

Parsing happens before anything reaches a pin, so a bad note is an error that names the input
and the buzzer's range. gpiozero's ``tones`` module is imported when a note is parsed.
"""

from __future__ import annotations

import re
from typing import Any

from clawseed_edge.api import ToolArgumentsInvalid

__all__ = ["SILENCE", "is_silence", "parse_note"]

_HZ = re.compile(r"^(\d+(?:\.\d+)?)\s*hz$", re.IGNORECASE)

SILENCE = frozenset({"off", "stop", "silence", "silent", "none"})
"""Words that mean "stop playing"."""


def is_silence(value: Any) -> bool:
    """Whether ``value`` asks for silence (``"off"``, ``"stop"`` ...)."""
    return isinstance(value, str) and value.strip().lower() in SILENCE


def parse_note(value: Any, low: Any, high: Any) -> Any:
    """A gpiozero ``Tone`` for ``value``, within the buzzer's range ``low``..``high`` (Tones).

    Raises:
        ToolArgumentsInvalid: Not a note or a frequency, or outside the range (both named).
    """
    from gpiozero.tones import Tone

    tone = None
    try:
        if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
            tone = Tone.from_frequency(float(value))
        elif isinstance(value, str) and (m := _HZ.match(value.strip())):
            tone = Tone.from_frequency(float(m.group(1)))
        elif isinstance(value, str) and value.strip():
            text = value.strip()
            tone = Tone.from_note(text[0].upper() + text[1:])
    except ValueError:
        tone = None
    if tone is None:
        raise ToolArgumentsInvalid(
            f"{value!r} is not a note: use a name like 'A4', 'C#5' or 'Bb3', or a frequency "
            "in Hz like 440"
        )
    # A tone exactly on the range's edge may differ from it by float rounding.
    if not low.frequency - 0.01 <= tone.frequency <= high.frequency + 0.01:
        raise ToolArgumentsInvalid(
            f"{tone.note} ({tone.frequency:.0f} Hz) is outside this buzzer's range "
            f"{low.note}..{high.note} ({low.frequency:.0f}..{high.frequency:.0f} Hz)"
        )
    return tone

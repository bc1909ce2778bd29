"""A simulated HD44780 LCD behind a PCF8574: it decodes E's falling edges into nibbles.

The model starts in 8-bit mode, as the controller does at power-on, so a driver that skips the
datasheet's initialisation by instruction shows garbage here as on a real display.
"""

from __future__ import annotations

from .bus import ChipModel

__all__ = ["HD44780Model"]

_RS, _E = 0x01, 0x04
# Where a real module's rows start in DDRAM, by width: rows 3-4 of a 4-line module are the
# second halves of the controller's two 40-character lines (16x4: 0x10/0x50, 20x4: 0x14/0x54).
_ROWS = {16: (0x00, 0x40, 0x10, 0x50), 20: (0x00, 0x40, 0x14, 0x54)}


class HD44780Model(ChipModel):
    """A simulated character LCD on a PCF8574 backpack.

    Args:
        columns: Characters per line.
        rows: Lines.

    Attributes:
        port: The PCF8574's last output byte.
        backlight: Whether P3 (the backlight transistor) is on.
    """

    def __init__(self, *, columns: int = 16, rows: int = 2) -> None:
        self.columns = columns
        self.rows = rows
        self.port = 0xFF
        self.eight_bit = True
        self.display_on = False
        self.ddram = bytearray(b" " * 0x80)
        self.address = 0
        self._high: int | None = None

    @property
    def backlight(self) -> bool:
        return bool(self.port & 0x08)

    @property
    def lines(self) -> list[str]:
        """What the screen shows, one string per row (blank when the display is off)."""
        out = []
        starts = _ROWS.get(self.columns, (0x00, 0x40))
        for row in range(self.rows):
            start = starts[row]
            raw = self.ddram[start : start + self.columns]
            text = "".join("°" if b == 0xDF else chr(b) if 0x20 <= b <= 0x7D else "?" for b in raw)
            out.append(text if self.display_on else " " * self.columns)
        return out

    @property
    def text(self) -> str:
        """The screen's lines, right-trimmed, joined by newlines."""
        return "\n".join(line.rstrip() for line in self.lines).rstrip("\n")

    def write(self, data: bytes) -> None:
        for value in data:
            falling = self.port & _E and not value & _E
            self.port = value
            if falling:
                self._latch(value >> 4, bool(value & _RS))

    def read(self, length: int) -> bytes:
        return bytes([self.port]) * length

    def _latch(self, nibble: int, rs: bool) -> None:
        if self.eight_bit:  # D0..D3 are not wired: they read as 0
            self._execute(nibble << 4, rs)
            return
        if self._high is None:
            self._high = nibble
            return
        value, self._high = (self._high << 4) | nibble, None
        self._execute(value, rs)

    def _execute(self, value: int, rs: bool) -> None:
        if rs:
            self.ddram[self.address & 0x7F] = value
            self.address = (self.address + 1) & 0x7F
        elif value & 0x80:
            self.address = value & 0x7F
        elif value & 0x40:
            pass  # CGRAM address: custom characters are not modelled
        elif value & 0x20:
            self.eight_bit = bool(value & 0x10)
        elif value & 0x10:
            pass  # cursor/display shift
        elif value & 0x08:
            self.display_on = bool(value & 0x04)
        elif value & 0x04:
            pass  # entry mode: we model increment only
        elif value & 0x02:
            self.address = 0
        elif value & 0x01:
            self.ddram[:] = b" " * 0x80
            self.address = 0

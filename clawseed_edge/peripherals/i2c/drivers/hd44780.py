"""A 16x2, 16x4 or 20x4 HD44780 character LCD on a PCF8574 I2C backpack.

Written from the Hitachi HD44780U datasheet (instruction table 6, 4-bit initialisation by
instruction, figure 24; character ROM A00, where 0xDF is the degree sign) and the NXP PCF8574
datasheet (one write sets the eight port pins). A 4-line module is a 2-line controller whose
lines are split in two: rows 1-2 start at DDRAM 0x00/0x40 and rows 3-4 continue them right
after the visible width, at 0x00 + columns / 0x40 + columns (0x10/0x50 on a 16x4, 0x14/0x54 on
a 20x4).

The common backpack wires the expander's pins P0 = RS, P1 = R/W, P2 = E, P3 = backlight,
P4..P7 = D4..D7, so every 4-bit transfer is two byte writes: E high with the data, then E low
(the controller latches on E's falling edge).
"""

from __future__ import annotations

import time
from typing import ClassVar

from clawseed_edge.api import ConfigInvalid, ToolArgumentsInvalid

from ...sensor_driver import Transport
from ..smbus import SMBusLike

__all__ = ["HD44780", "encode_text", "layout", "row_offsets"]

RS = 0x01
ENABLE = 0x04
BACKLIGHT = 0x08

CMD_CLEAR = 0x01
CMD_ENTRY_INCREMENT = 0x06
CMD_DISPLAY_ON = 0x0C
CMD_FUNCTION_4BIT_2LINE = 0x28
CMD_SET_DDRAM = 0x80

DEGREE = 0xDF  # ROM A00's degree sign


def row_offsets(columns: int) -> tuple[int, int, int, int]:
    """DDRAM addresses of the four rows of a ``columns``-wide module (see the module doc)."""
    return (0x00, 0x40, columns, 0x40 + columns)


def encode_text(text: str) -> bytes:
    """Characters as codes of the controller's ROM A00: printable ASCII (0x5C is a yen sign
    there, so a backslash becomes '/'), the degree sign; anything else becomes '?'."""
    out = bytearray()
    for ch in text:
        code = ord(ch)
        if ch == "°":
            out.append(DEGREE)
        elif ch == "\\":
            out.append(ord("/"))
        elif 0x20 <= code <= 0x7D:
            out.append(code)
        else:
            out.append(ord("?"))
    return bytes(out)


def layout(text: str, columns: int, rows: int) -> list[str]:
    """``text`` as at most ``rows`` lines of at most ``columns`` characters.

    Explicit newlines start a new line; a line longer than the display is wrapped at spaces.

    Raises:
        ToolArgumentsInvalid: The text does not fit (says how much does).
    """
    lines: list[str] = []
    for paragraph in text.strip("\n").split("\n"):
        current = ""
        for word in paragraph.split(" "):
            while len(word) > columns:  # a word longer than a line is cut across lines
                if current:
                    lines.append(current)
                    current = ""
                lines.append(word[:columns])
                word = word[columns:]
            candidate = f"{current} {word}" if current else word
            if len(candidate) <= columns:
                current = candidate
            else:
                lines.append(current)
                current = word
        lines.append(current)
    if len(lines) > rows:
        raise ToolArgumentsInvalid(
            f"the text needs {len(lines)} lines and the display shows {rows} lines of "
            f"{columns} characters; shorten it to about {rows * columns} characters"
        )
    return lines


class HD44780:
    """An HD44780 LCD behind a PCF8574 expander.

    Args:
        bus: An SMBus-like bus.
        address: The PCF8574's address: 0x27 on most backpacks (0x20..0x27), 0x3F on the
            PCF8574A variant (0x38..0x3F).
        columns: Characters per line (16 or 20; 8..40).
        rows: Lines (1, 2 or 4; a 4-line module is at most 20 wide).

    Raises:
        ConfigInvalid: A geometry one HD44780 cannot drive.
    """

    driver_name: ClassVar[str] = "hd44780"
    transport: ClassVar[Transport] = "i2c"
    addresses: ClassVar[tuple[int, ...]] = (0x27, *range(0x20, 0x27), *range(0x38, 0x40))
    summary: ClassVar[str] = "HD44780 16x2/20x4 character LCD on a PCF8574 backpack (I2C 0x27)"

    def __init__(
        self, bus: SMBusLike, address: int = 0x27, *, columns: int = 16, rows: int = 2
    ) -> None:
        if rows not in (1, 2, 4) or not 8 <= columns <= 40 or (rows == 4 and columns > 20):
            # Each of the controller's two lines holds 40 characters; a 4-line module splits
            # them in two, so its rows are at most 20 wide (a 40x4 needs two controllers).
            raise ConfigInvalid(
                f"hd44780: a {columns}x{rows} display is not one HD44780's geometry; use "
                "columns = 16 or 20 with rows = 2 or 4 (8..40 columns with 1-2 rows)",
                key="options",
            )
        self.bus = bus
        self.address = address
        self.columns = columns
        self.rows = rows
        self.lines: list[str] = []

    def setup(self) -> None:
        """The datasheet's initialisation by instruction into 4-bit mode, then clear."""
        time.sleep(0.05)  # > 40 ms after power reaches 2.7 V
        # Three times "8-bit interface": whatever state the controller was left in (even half
        # way through a 4-bit transfer), it is in 8-bit mode afterwards.
        for wait in (0.0045, 0.00015, 0.00015):
            self._nibble(0x3, 0)
            time.sleep(wait)
        self._nibble(0x2, 0)  # now 4-bit
        for command in (CMD_FUNCTION_4BIT_2LINE, CMD_DISPLAY_ON, CMD_ENTRY_INCREMENT):
            self._byte(command, 0)
        self._byte(CMD_CLEAR, 0)
        time.sleep(0.002)  # clear takes 1.52 ms
        self.lines = [""] * self.rows

    def show(self, lines: list[str]) -> None:
        """Write ``lines`` from the top, each padded with spaces to the full width.

        Raises:
            ToolArgumentsInvalid: More lines than rows, or a line longer than the width.
        """
        if len(lines) > self.rows or any(len(line) > self.columns for line in lines):
            raise ToolArgumentsInvalid(
                f"a {self.columns}x{self.rows} display shows {self.rows} lines of "
                f"{self.columns} characters"
            )
        padded = [*lines, *[""] * (self.rows - len(lines))]
        offsets = row_offsets(self.columns)
        for row, line in enumerate(padded):
            self._byte(CMD_SET_DDRAM | offsets[row], 0)
            for code in encode_text(line.ljust(self.columns)):
                self._byte(code, RS)
        self.lines = padded

    def _byte(self, value: int, mode: int) -> None:
        self._nibble(value >> 4, mode)
        self._nibble(value & 0x0F, mode)

    def _nibble(self, nibble: int, mode: int) -> None:
        data = (nibble << 4) | mode | BACKLIGHT
        self.bus.write_byte(self.address, data | ENABLE)
        self.bus.write_byte(self.address, data)  # falling edge of E latches D4..D7

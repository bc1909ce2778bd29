"""A simulated SSD1306 OLED: it decodes the I2C command and data streams into display RAM.

A write starts with a control byte (datasheet 8.1.5): D/C# (bit 6) says whether the bytes
that follow are commands or display RAM data; Co (bit 7) set means only the next byte is
governed by it, and another control byte follows. Commands are decoded with their parameter
bytes (table 9); data lands where the addressing mode (page, horizontal, vertical; 20h) and the
column/page windows (21h/22h, or B0h-B7h with 00h-1Fh in page mode) put it.

What a viewer sees (:meth:`SSD1306Model.pixel`) follows the common modules' wiring: the image is
upright with segment re-map A1h and COM scan C8h (the defaults A0h/C0h show it rotated by 180
degrees), and the panel stays dark until the charge pump (8Dh 14h) is on and AFh is sent.
"""

from __future__ import annotations

from clawseed_edge.peripherals.i2c.drivers.font5x8 import CELL_HEIGHT, CELL_WIDTH, GLYPHS

from .bus import ChipModel

__all__ = ["SSD1306Model"]

# Commands followed by parameter bytes, and how many (SSD1306 datasheet, table 9).
_PARAMETERS = {
    0x81: 1, 0x20: 1, 0x21: 2, 0x22: 2, 0xA8: 1, 0xD3: 1, 0xD5: 1, 0xD9: 1, 0xDA: 1,
    0xDB: 1, 0x8D: 1, 0x26: 6, 0x27: 6, 0x29: 5, 0x2A: 5, 0xA3: 2,
}  # fmt: skip
_BY_GLYPH = {glyph: ch for ch, glyph in GLYPHS.items()}


class SSD1306Model(ChipModel):
    """A simulated 128-column SSD1306 module.

    Args:
        width: Pixels across (128).
        height: Pixels down (64 or 32): the panel the controller drives.

    Attributes:
        commands: Every command received, as ``(opcode, *parameters)`` tuples, in order.
        ram: Display RAM, ``pages`` x 128 bytes (8 pages on the chip whatever the panel).
    """

    def __init__(self, *, width: int = 128, height: int = 64) -> None:
        self.width = width
        self.height = height
        self.commands: list[tuple[int, ...]] = []
        self.ram = bytearray(128 * 8)
        self.display_on = False
        self.charge_pump = False
        self.segment_remap = False
        self.com_remap = False
        self.mux = 63
        self.com_pins = 0x12
        self.mode = 2  # page addressing after reset
        self.column, self.page = 0, 0
        self.columns_window = (0, 127)
        self.pages_window = (0, 7)
        self._pending: list[int] = []

    # --- the I2C side -------------------------------------------------------------------------

    def write(self, data: bytes) -> None:
        index = 0
        while index < len(data):
            control = data[index]
            index += 1
            single = bool(control & 0x80)
            stream = data[index : index + 1] if single else data[index:]
            index += len(stream)
            for value in stream:
                if control & 0x40:
                    self._data(value)
                else:
                    self._command_byte(value)

    def read(self, length: int) -> bytes:
        # A read returns the status byte: bit 6 set while the display is off.
        return bytes([0x00 if self.display_on else 0x40]) * length

    # --- what a viewer sees -------------------------------------------------------------------

    @property
    def lit(self) -> bool:
        """Whether the panel shows anything: display on and the charge pump running."""
        return self.display_on and self.charge_pump

    def problems(self) -> list[str]:
        """Why the module would not show an upright, whole image (empty when it would)."""
        out = []
        if not self.charge_pump:
            out.append("charge pump off (8Dh 14h): the panel stays dark")
        if not self.display_on:
            out.append("display off (AFh not sent)")
        if self.mux != self.height - 1:
            out.append(f"MUX ratio {self.mux + 1} on a {self.height}-row panel")
        wanted = 0x12 if self.height == 64 else 0x02
        if self.com_pins != wanted:
            out.append(f"COM pins 0x{self.com_pins:02x}, the panel needs 0x{wanted:02x}")
        if not (self.segment_remap and self.com_remap):
            out.append("segment re-map / COM scan not A1h/C8h: the image is upside down")
        return out

    def pixel(self, x: int, y: int) -> bool:
        """Whether the pixel at column ``x``, row ``y`` (from the top left) is lit."""
        if not self.lit:
            return False
        column = x if self.segment_remap else self.width - 1 - x
        row = y if self.com_remap else self.height - 1 - y
        return bool(self.ram[(row // 8) * 128 + column] >> (row % 8) & 1)

    @property
    def lines(self) -> list[str]:
        """The text on the screen, read back from its pixels in the package's font, one
        string per 8-pixel line (``?`` for a cell that is no known character)."""
        out = []
        for line in range(self.height // CELL_HEIGHT):
            text = ""
            for cell in range(self.width // CELL_WIDTH):
                glyph = bytes(
                    sum(self.pixel(cell * CELL_WIDTH + c, line * CELL_HEIGHT + r) << r
                        for r in range(CELL_HEIGHT))
                    for c in range(CELL_WIDTH - 1)
                )  # fmt: skip
                text += _BY_GLYPH.get(glyph, "?")
            out.append(text)
        return out

    @property
    def text(self) -> str:
        """The screen's lines, right-trimmed, joined by newlines."""
        return "\n".join(line.rstrip() for line in self.lines).rstrip("\n")

    # --- internals ----------------------------------------------------------------------------

    def _command_byte(self, value: int) -> None:
        if self._pending:
            self._pending.append(value)
        else:
            self._pending = [value]
        if len(self._pending) - 1 < _PARAMETERS.get(self._pending[0], 0):
            return  # waiting for parameter bytes
        command, self._pending = tuple(self._pending), []
        self.commands.append(command)
        self._execute(command)

    def _execute(self, command: tuple[int, ...]) -> None:
        op, args = command[0], command[1:]
        if op in (0xAE, 0xAF):
            self.display_on = op == 0xAF
        elif op == 0x8D:
            self.charge_pump = bool(args[0] & 0x04)
        elif op in (0xA0, 0xA1):
            self.segment_remap = op == 0xA1
        elif op in (0xC0, 0xC8):
            self.com_remap = op == 0xC8
        elif op == 0xA8:
            self.mux = args[0] & 0x3F
        elif op == 0xDA:
            self.com_pins = args[0]
        elif op == 0x20:
            self.mode = args[0] & 0x03
        elif op == 0x21:
            self.columns_window = (args[0] & 0x7F, args[1] & 0x7F)
            self.column = self.columns_window[0]
        elif op == 0x22:
            self.pages_window = (args[0] & 0x07, args[1] & 0x07)
            self.page = self.pages_window[0]
        elif 0xB0 <= op <= 0xB7:
            self.page = op & 0x07
        elif op <= 0x0F:
            self.column = (self.column & 0xF0) | op
        elif op <= 0x1F:
            self.column = (self.column & 0x0F) | (op & 0x0F) << 4
        # Other commands (contrast, offset, start line, oscillator ...) change nothing modelled.

    def _data(self, value: int) -> None:
        self.ram[self.page * 128 + self.column] = value
        (c0, c1), (p0, p1) = self.columns_window, self.pages_window
        if self.mode == 2:  # page addressing: the column wraps within the page
            self.column = 0 if self.column >= 127 else self.column + 1
        elif self.mode == 0:  # horizontal: across the window, then the next page
            if self.column >= c1:
                self.column = c0
                self.page = p0 if self.page >= p1 else self.page + 1
            else:
                self.column += 1
        else:  # vertical: down the window, then the next column
            if self.page >= p1:
                self.page = p0
                self.column = c0 if self.column >= c1 else self.column + 1
            else:
                self.page += 1

"""A 128x64 or 128x32 SSD1306 OLED over I2C, showing text in the package's 5x8 font.

Written from the Solomon Systech SSD1306 datasheet (command table 9; the I2C write format of
8.1.5: after the address, a control byte 0x00 starts a stream of commands, 0x40 a stream of
display RAM data; horizontal addressing mode 10.1.3 with the column and page windows 21h/22h)
and its application note's software initialisation flow (datasheet figure "Software
Initialization Flow Chart"): MUX ratio A8h, display offset D3h, start line 40h, segment re-map
A0h/A1h, COM scan direction C0h/C8h, COM pins DAh, contrast 81h, A4h (show RAM), A6h (normal,
not inverted), oscillator D5h, charge pump 8Dh 14h, then display on AFh. The charge pump must be
on before AFh: the common modules have no external VCC, and without it the panel stays dark.

Display RAM is ``height / 8`` pages of 128 column bytes, bit 0 the top pixel of the page. A text
line is one page of 6-pixel cells, so a 128x64 screen shows 8 lines of 21 characters and a
128x32 one 4 lines.
"""

from __future__ import annotations

import time
from typing import ClassVar

from clawseed_edge.api import ConfigInvalid, ToolArgumentsInvalid

from ...sensor_driver import Transport
from ..smbus import SMBusLike
from .font5x8 import CELL_HEIGHT, CELL_WIDTH, glyph_columns

__all__ = ["CONTROL_COMMANDS", "CONTROL_DATA", "SSD1306", "init_sequence", "render_page"]

CONTROL_COMMANDS = 0x00  # Co = 0, D/C# = 0: every following byte is a command
CONTROL_DATA = 0x40  # Co = 0, D/C# = 1: every following byte is display RAM data
WIDTH = 128
HEIGHTS = (32, 64)


def init_sequence(height: int) -> list[int]:
    """The commands that start a ``height``-row module, in the application note's order.

    The module-specific values: MUX ratio height - 1; COM pins 0x12 (alternative) for 64 rows,
    0x02 (sequential) for 32; segment re-map A1h and COM scan C8h, which is how the common
    modules are wired for an upright image; horizontal addressing (20h 00h) so one data stream
    fills the pages in order.
    """
    com_pins = 0x12 if height == 64 else 0x02
    return [
        0xAE,  # display off while configuring
        0xA8, height - 1,  # MUX ratio
        0xD3, 0x00,  # display offset
        0x40,  # display start line 0
        0xA1,  # segment re-map: column 127 is SEG0
        0xC8,  # COM output scan direction: remapped
        0xDA, com_pins,  # COM pins hardware configuration
        0x81, 0x7F,  # contrast
        0xA4,  # the display follows RAM (not entirely on)
        0xA6,  # normal, not inverted
        0xD5, 0x80,  # oscillator frequency, clock divide ratio (reset value)
        0x20, 0x00,  # horizontal addressing mode
        0x8D, 0x14,  # enable the charge pump
    ]  # fmt: skip


def render_page(line: str, width: int = WIDTH) -> bytes:
    """One page (8 pixel rows) of ``line``: 6-pixel cells, unused columns blank."""
    page = bytearray(width)
    for i, ch in enumerate(line[: width // CELL_WIDTH]):
        x = i * CELL_WIDTH
        page[x : x + CELL_WIDTH - 1] = glyph_columns(ch)
    return bytes(page)


class SSD1306:
    """An SSD1306 OLED module on an I2C bus.

    Args:
        bus: An SMBus-like bus.
        address: 0x3C (most modules; SA0 low) or 0x3D.
        width: Pixels across: 128.
        height: Pixels down: 64 or 32.

    Raises:
        ConfigInvalid: A size the driver does not drive.
    """

    driver_name: ClassVar[str] = "ssd1306"
    transport: ClassVar[Transport] = "i2c"
    addresses: ClassVar[tuple[int, ...]] = (0x3C, 0x3D)
    summary: ClassVar[str] = "SSD1306 128x64/128x32 OLED, text in a 5x8 font (I2C 0x3C/0x3D)"

    def __init__(
        self, bus: SMBusLike, address: int = 0x3C, *, width: int = WIDTH, height: int = 64
    ) -> None:
        if width != WIDTH or height not in HEIGHTS:
            raise ConfigInvalid(
                f"ssd1306: a {width}x{height} module is not supported; use width = 128 with "
                "height = 64 or 32",
                key="options",
            )
        self.bus = bus
        self.address = address
        self.width = width
        self.height = height
        self.pages = height // CELL_HEIGHT
        self.columns = width // CELL_WIDTH
        self.rows = self.pages
        self.lines: list[str] = []

    def setup(self) -> None:
        """The application note's initialisation, a blank screen, then display on."""
        self._commands(init_sequence(self.height))
        self._write_pages([bytes(self.width)] * self.pages)  # RAM holds noise at power-on
        self._commands([0xAF])
        time.sleep(0.1)  # the datasheet's 100 ms after AFh before the panel is fully lit
        self.lines = [""] * self.rows

    def show(self, lines: list[str]) -> None:
        """Write ``lines`` from the top, one per page; the rest of the screen is cleared.

        Raises:
            ToolArgumentsInvalid: More lines than rows, or a line longer than the width.
        """
        if len(lines) > self.rows or any(len(line) > self.columns for line in lines):
            raise ToolArgumentsInvalid(
                f"a {self.width}x{self.height} OLED shows {self.rows} lines of "
                f"{self.columns} characters"
            )
        padded = [*lines, *[""] * (self.rows - len(lines))]
        self._write_pages([render_page(line, self.width) for line in padded])
        self.lines = padded

    def _commands(self, commands: list[int]) -> None:
        # An SMBus block carries at most 32 bytes after the control byte.
        for start in range(0, len(commands), 32):
            self.bus.write_i2c_block_data(
                self.address, CONTROL_COMMANDS, commands[start : start + 32]
            )

    def _write_pages(self, pages: list[bytes]) -> None:
        from smbus2 import i2c_msg  # plain ctypes; the simulated bus reads the same buffer

        # The whole screen as the column/page window, then one transfer per page (129 bytes:
        # the control byte and 128 columns); horizontal addressing moves on to the next page.
        self._commands([0x21, 0, self.width - 1, 0x22, 0, self.pages - 1])
        for page in pages:
            self.bus.i2c_rdwr(i2c_msg.write(self.address, bytes([CONTROL_DATA]) + page))

"""A 5x8 bitmap font for printable ASCII and the degree sign, drawn for this package.

Each glyph is eight rows of five pixels (rows 0-6 hold the letter, row 7 only the descenders of
g, j, p, q, y), written as eight 2-digit hex numbers, one per row, bit 4 the leftmost pixel.
A text cell is 6x8 pixels (one blank column between letters), so one line of text is one
8-pixel page of an SSD1306's display RAM: a 128-pixel-wide screen holds 21 characters a line.
"""

from __future__ import annotations

__all__ = ["CELL_HEIGHT", "CELL_WIDTH", "GLYPHS", "REPLACEMENT", "glyph_columns"]

CELL_WIDTH = 6
CELL_HEIGHT = 8
REPLACEMENT = "?"

_ROWS: dict[str, str] = {
    " ": "00 00 00 00 00 00 00 00",
    "!": "04 04 04 04 04 00 04 00",
    '"': "0a 0a 0a 00 00 00 00 00",
    "#": "0a 0a 1f 0a 1f 0a 0a 00",
    "$": "04 0f 14 0e 05 1e 04 00",
    "%": "18 19 02 04 08 13 03 00",
    "&": "0c 12 14 08 15 12 0d 00",
    "'": "0c 04 08 00 00 00 00 00",
    "(": "02 04 08 08 08 04 02 00",
    ")": "08 04 02 02 02 04 08 00",
    "*": "00 04 15 0e 15 04 00 00",
    "+": "00 04 04 1f 04 04 00 00",
    ",": "00 00 00 00 0c 04 08 00",
    "-": "00 00 00 1f 00 00 00 00",
    ".": "00 00 00 00 00 0c 0c 00",
    "/": "00 01 02 04 08 10 00 00",
    "0": "0e 11 13 15 19 11 0e 00",
    "1": "04 0c 04 04 04 04 0e 00",
    "2": "0e 11 01 02 04 08 1f 00",
    "3": "1f 02 04 02 01 11 0e 00",
    "4": "02 06 0a 12 1f 02 02 00",
    "5": "1f 10 1e 01 01 11 0e 00",
    "6": "06 08 10 1e 11 11 0e 00",
    "7": "1f 01 02 04 08 08 08 00",
    "8": "0e 11 11 0e 11 11 0e 00",
    "9": "0e 11 11 0f 01 02 0c 00",
    ":": "00 0c 0c 00 0c 0c 00 00",
    ";": "00 0c 0c 00 0c 04 08 00",
    "<": "02 04 08 10 08 04 02 00",
    "=": "00 00 1f 00 1f 00 00 00",
    ">": "08 04 02 01 02 04 08 00",
    "?": "0e 11 01 02 04 00 04 00",
    "@": "0e 11 01 0d 15 15 0e 00",
    "A": "0e 11 11 11 1f 11 11 00",
    "B": "1e 11 11 1e 11 11 1e 00",
    "C": "0e 11 10 10 10 11 0e 00",
    "D": "1c 12 11 11 11 12 1c 00",
    "E": "1f 10 10 1e 10 10 1f 00",
    "F": "1f 10 10 1e 10 10 10 00",
    "G": "0e 11 10 17 11 11 0f 00",
    "H": "11 11 11 1f 11 11 11 00",
    "I": "0e 04 04 04 04 04 0e 00",
    "J": "07 02 02 02 02 12 0c 00",
    "K": "11 12 14 18 14 12 11 00",
    "L": "10 10 10 10 10 10 1f 00",
    "M": "11 1b 15 15 11 11 11 00",
    "N": "11 11 19 15 13 11 11 00",
    "O": "0e 11 11 11 11 11 0e 00",
    "P": "1e 11 11 1e 10 10 10 00",
    "Q": "0e 11 11 11 15 12 0d 00",
    "R": "1e 11 11 1e 14 12 11 00",
    "S": "0f 10 10 0e 01 01 1e 00",
    "T": "1f 04 04 04 04 04 04 00",
    "U": "11 11 11 11 11 11 0e 00",
    "V": "11 11 11 11 11 0a 04 00",
    "W": "11 11 11 15 15 15 0a 00",
    "X": "11 11 0a 04 0a 11 11 00",
    "Y": "11 11 11 0a 04 04 04 00",
    "Z": "1f 01 02 04 08 10 1f 00",
    "[": "0e 08 08 08 08 08 0e 00",
    "\\": "00 10 08 04 02 01 00 00",
    "]": "0e 02 02 02 02 02 0e 00",
    "^": "04 0a 11 00 00 00 00 00",
    "_": "00 00 00 00 00 00 1f 00",
    "`": "08 04 02 00 00 00 00 00",
    "a": "00 00 0e 01 0f 11 0f 00",
    "b": "10 10 16 19 11 11 1e 00",
    "c": "00 00 0e 10 10 11 0e 00",
    "d": "01 01 0d 13 11 11 0f 00",
    "e": "00 00 0e 11 1f 10 0e 00",
    "f": "06 09 08 1c 08 08 08 00",
    "g": "00 00 0f 11 11 0f 01 0e",
    "h": "10 10 16 19 11 11 11 00",
    "i": "04 00 0c 04 04 04 0e 00",
    "j": "02 00 06 02 02 02 12 0c",
    "k": "10 10 12 14 18 14 12 00",
    "l": "0c 04 04 04 04 04 0e 00",
    "m": "00 00 1a 15 15 11 11 00",
    "n": "00 00 16 19 11 11 11 00",
    "o": "00 00 0e 11 11 11 0e 00",
    "p": "00 00 1e 11 11 1e 10 10",
    "q": "00 00 0f 11 11 0f 01 01",
    "r": "00 00 16 19 10 10 10 00",
    "s": "00 00 0e 10 0e 01 1e 00",
    "t": "08 08 1c 08 08 09 06 00",
    "u": "00 00 11 11 11 13 0d 00",
    "v": "00 00 11 11 11 0a 04 00",
    "w": "00 00 11 11 15 15 0a 00",
    "x": "00 00 11 0a 04 0a 11 00",
    "y": "00 00 11 11 11 0f 01 0e",
    "z": "00 00 1f 02 04 08 1f 00",
    "{": "02 04 04 08 04 04 02 00",
    "|": "04 04 04 04 04 04 04 00",
    "}": "08 04 04 02 04 04 08 00",
    "~": "00 00 08 15 02 00 00 00",
    "°": "0c 12 12 0c 00 00 00 00",
}


def _columns(rows: str) -> bytes:
    # Display RAM bytes are vertical: bit 0 is the top pixel of a column, bit 7 the bottom.
    bits = [int(r, 16) for r in rows.split()]
    return bytes(
        sum(((row >> (4 - col)) & 1) << y for y, row in enumerate(bits)) for col in range(5)
    )


GLYPHS: dict[str, bytes] = {ch: _columns(rows) for ch, rows in _ROWS.items()}
"""Character -> its five column bytes (bit 0 the top row)."""


def glyph_columns(ch: str) -> bytes:
    """The five column bytes of ``ch``; a character the font lacks shows as ``?``."""
    return GLYPHS.get(ch, GLYPHS[REPLACEMENT])

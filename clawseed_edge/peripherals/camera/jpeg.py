"""JPEG bytes without an image library: a block encoder for synthetic frames, and MJPEG helpers.

:func:`encode_blocks` writes a baseline JPEG whose every 8x8 block is one flat colour (only the
DC coefficient is coded, every AC run is an end-of-block). That is all a simulated scene needs
(a moving square, a door, clock digits drawn in blocks), it costs a few milliseconds in pure
Python, and it keeps Pillow out of the process until motion detection needs pixels.

:func:`complete_mjpeg` makes a UVC webcam's MJPEG frame a JPEG any decoder takes: many webcams
leave out the Huffman tables (the "AVI1" convention), so the standard ones are put back.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

__all__ = [
    "JPEGInvalid",
    "complete_mjpeg",
    "encode_blocks",
    "jpeg_size",
    "split_mjpeg",
    "with_rotation",
]

RGB = tuple[int, int, int]

# ITU T.81 Annex K: the standard quantisation and Huffman tables.
_Q_LUMA_DC = 16
_Q_CHROMA_DC = 17
_DC_LUMA_BITS = (0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0)
_DC_LUMA_VALS = tuple(range(12))
_DC_CHROMA_BITS = (0, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0)
_DC_CHROMA_VALS = tuple(range(12))
_AC_LUMA_BITS = (0, 2, 1, 3, 3, 2, 4, 3, 5, 5, 4, 4, 0, 0, 1, 0x7D)
_AC_CHROMA_BITS = (0, 2, 1, 2, 4, 4, 3, 4, 7, 5, 4, 4, 0, 1, 2, 0x77)
# fmt: off
_AC_LUMA_VALS = bytes.fromhex(
    "01020300041105122131410613516107227114328191a1082342b1c11552d1f02433627282090a161718191a25"
    "262728292a3435363738393a434445464748494a535455565758595a636465666768696a737475767778797a83"
    "8485868788898a92939495969798999aa2a3a4a5a6a7a8a9aab2b3b4b5b6b7b8b9bac2c3c4c5c6c7c8c9cad2d3"
    "d4d5d6d7d8d9dae1e2e3e4e5e6e7e8e9eaf1f2f3f4f5f6f7f8f9fa"
)
_AC_CHROMA_VALS = bytes.fromhex(
    "000102031104052131061241510761711322328108144291a1b1c109233352f0156272d10a162434e125f11718"
    "191a262728292a35363738393a434445464748494a535455565758595a636465666768696a737475767778797a"
    "82838485868788898a92939495969798999aa2a3a4a5a6a7a8a9aab2b3b4b5b6b7b8b9bac2c3c4c5c6c7c8c9ca"
    "d2d3d4d5d6d7d8d9dae2e3e4e5e6e7e8e9eaf2f3f4f5f6f7f8f9fa"
)
# fmt: on
_EOB_LUMA = (0b1010, 4)  # the code of symbol 0x00 in the standard luminance AC table
_EOB_CHROMA = (0b00, 2)

#: Largest frame side the encoder takes (a 4K synthetic frame is a mistake, not a use).
MAX_SIDE = 4096


class JPEGInvalid(ValueError):
    """The bytes are not a JPEG (or an MJPEG frame) this module can read; says what is wrong."""


def _codes(bits: Sequence[int], vals: Sequence[int]) -> dict[int, tuple[int, int]]:
    """Symbol -> (code, length) of a canonical Huffman table (T.81 Annex C)."""
    out: dict[int, tuple[int, int]] = {}
    code, k = 0, 0
    for length, count in enumerate(bits, start=1):
        for _ in range(count):
            out[vals[k]] = (code, length)
            code += 1
            k += 1
        code <<= 1
    return out


_DC_LUMA = _codes(_DC_LUMA_BITS, _DC_LUMA_VALS)
_DC_CHROMA = _codes(_DC_CHROMA_BITS, _DC_CHROMA_VALS)


def _segment(marker: int, payload: bytes) -> bytes:
    return struct.pack(">BBH", 0xFF, marker, len(payload) + 2) + payload


def _dht() -> bytes:
    """The four standard Huffman tables in one DHT segment."""
    payload = b""
    for tc_th, bits, vals in (
        (0x00, _DC_LUMA_BITS, _DC_LUMA_VALS),
        (0x10, _AC_LUMA_BITS, _AC_LUMA_VALS),
        (0x01, _DC_CHROMA_BITS, _DC_CHROMA_VALS),
        (0x11, _AC_CHROMA_BITS, _AC_CHROMA_VALS),
    ):
        payload += bytes([tc_th, *bits, *vals])
    return _segment(0xC4, payload)


_DHT_SEGMENT = _dht()


class _Bits:
    """An MSB-first bit writer with JPEG's 0xFF byte stuffing."""

    __slots__ = ("acc", "n", "out")

    def __init__(self) -> None:
        self.out = bytearray()
        self.acc = 0
        self.n = 0

    def put(self, code: int, length: int) -> None:
        self.acc = (self.acc << length) | code
        self.n += length
        while self.n >= 8:
            self.n -= 8
            byte = (self.acc >> self.n) & 0xFF
            self.out.append(byte)
            if byte == 0xFF:
                self.out.append(0)
        self.acc &= (1 << self.n) - 1

    def flush(self) -> bytes:
        if self.n:
            self.put((1 << (8 - self.n)) - 1, 8 - self.n)  # pad with ones (T.81 F.1.2.3)
        return bytes(self.out)


def _dc(bits: _Bits, table: dict[int, tuple[int, int]], diff: int) -> None:
    size = abs(diff).bit_length()
    bits.put(*table[size])
    if size:
        bits.put(diff if diff > 0 else diff + (1 << size) - 1, size)


def _quality_scale(quality: int) -> float:
    """libjpeg's quality -> table scale (50 is the standard tables as they are)."""
    quality = min(max(quality, 1), 100)
    percent = 5000 / quality if quality < 50 else 200 - 2 * quality
    return percent / 100.0


def encode_blocks(blocks: Sequence[Sequence[RGB]], quality: int = 80) -> bytes:
    """A baseline JPEG of ``blocks``: rows of 8x8-pixel flat colours, each ``(r, g, b)`` 0..255.

    The picture is ``8 * len(blocks[0])`` by ``8 * len(blocks)`` pixels.

    Raises:
        JPEGInvalid: No rows, rows of different lengths, or a side over ``MAX_SIDE`` pixels.
    """
    rows = len(blocks)
    cols = len(blocks[0]) if rows else 0
    if not rows or not cols or any(len(r) != cols for r in blocks):
        raise JPEGInvalid("the frame has no blocks, or rows of different lengths")
    width, height = cols * 8, rows * 8
    if width > MAX_SIDE or height > MAX_SIDE:
        raise JPEGInvalid(f"a {width}x{height} frame is over the {MAX_SIDE} px limit")
    scale = _quality_scale(quality)
    q_luma = max(1, min(255, round(_Q_LUMA_DC * scale)))
    q_chroma = max(1, min(255, round(_Q_CHROMA_DC * scale)))
    head = b"\xff\xd8" + _segment(0xE0, b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00")
    # Only the DC entry of each table matters (every AC coefficient is zero); the rest are 1.
    head += _segment(0xDB, bytes([0, q_luma] + [1] * 63) + bytes([1, q_chroma] + [1] * 63))
    head += _segment(
        0xC0,
        struct.pack(">BHHB", 8, height, width, 3) + bytes([1, 0x11, 0, 2, 0x11, 1, 3, 0x11, 1]),
    )
    head += _DHT_SEGMENT
    head += _segment(0xDA, bytes([3, 1, 0x00, 2, 0x11, 3, 0x11, 0, 63, 0]))
    bits = _Bits()
    prev = [0, 0, 0]
    cache: dict[RGB, tuple[int, int, int]] = {}
    for row in blocks:
        for rgb in row:
            dcs = cache.get(rgb)
            if dcs is None:
                r, g, b = rgb
                y = 0.299 * r + 0.587 * g + 0.114 * b
                cb = 128 - 0.168736 * r - 0.331264 * g + 0.5 * b
                cr = 128 + 0.5 * r - 0.418688 * g - 0.081312 * b
                # The DC coefficient of a flat 8x8 block is 8 x (its level - 128).
                dcs = (
                    round(8 * (y - 128) / q_luma),
                    round(8 * (cb - 128) / q_chroma),
                    round(8 * (cr - 128) / q_chroma),
                )
                cache[rgb] = dcs
            for c in range(3):
                _dc(bits, _DC_LUMA if c == 0 else _DC_CHROMA, dcs[c] - prev[c])
                prev[c] = dcs[c]
                bits.put(*(_EOB_LUMA if c == 0 else _EOB_CHROMA))
    return head + bits.flush() + b"\xff\xd9"


def _segments(data: bytes) -> list[tuple[int, int, int]]:
    """(marker, start, end) of each header segment up to and including SOS."""
    if not data.startswith(b"\xff\xd8"):
        raise JPEGInvalid("not a JPEG: it does not start with the SOI marker FF D8")
    out: list[tuple[int, int, int]] = []
    pos = 2
    while pos + 4 <= len(data):
        if data[pos] != 0xFF:
            raise JPEGInvalid(f"not a JPEG: no marker at byte {pos}")
        marker = data[pos + 1]
        if marker == 0xFF:  # fill byte
            pos += 1
            continue
        (length,) = struct.unpack(">H", data[pos + 2 : pos + 4])
        out.append((marker, pos, pos + 2 + length))
        if marker == 0xDA:
            return out
        pos += 2 + length
    raise JPEGInvalid("not a complete JPEG: the header ends before the scan (SOS)")


def jpeg_size(data: bytes) -> tuple[int, int]:
    """(width, height) from a JPEG's frame header.

    Raises:
        JPEGInvalid: Not a JPEG, or no SOF segment before the scan.
    """
    for marker, start, _end in _segments(data):
        if marker in (0xC0, 0xC1, 0xC2):
            height, width = struct.unpack(">HH", data[start + 5 : start + 9])
            return width, height
    raise JPEGInvalid("not a JPEG this module reads: no baseline or progressive frame header")


def complete_mjpeg(frame: bytes) -> bytes:
    """``frame`` with the standard Huffman tables put in when it has none (UVC MJPEG).

    Raises:
        JPEGInvalid: The frame is not a JPEG (a truncated USB transfer, another format).
    """
    segments = _segments(frame)
    if any(marker == 0xC4 for marker, _, _ in segments):
        return frame
    sos = segments[-1][1]
    return frame[:sos] + _DHT_SEGMENT + frame[sos:]


def split_mjpeg(stream: bytes, *, max_frames: int = 10_000) -> list[bytes]:
    """The frames of a raw MJPEG stream (JPEGs back to back), split on SOI/EOI markers.

    A scan's 0xFF bytes are stuffed (FF 00) and restart markers are FF D0..D7, so FF D9 ends a
    frame and only there.
    """
    frames: list[bytes] = []
    pos = 0
    while len(frames) < max_frames:
        start = stream.find(b"\xff\xd8", pos)
        if start < 0:
            break
        end = stream.find(b"\xff\xd9", start + 2)
        if end < 0:
            break
        frames.append(stream[start : end + 2])
        pos = end + 2
    return frames


_ORIENTATION = {0: 1, 90: 6, 180: 3, 270: 8}  # EXIF orientation of a clockwise rotation


def with_rotation(data: bytes, rotation: int) -> bytes:
    """``data`` with an EXIF orientation saying how to turn it (0 returns it as it is).

    The pixels are not touched: browsers, phones and Pillow's ``exif_transpose`` honour the tag.

    Raises:
        JPEGInvalid: Not a JPEG; a rotation other than 0, 90, 180, 270.
    """
    if rotation not in _ORIENTATION:
        raise JPEGInvalid(f"rotation {rotation} must be 0, 90, 180 or 270")
    if not data.startswith(b"\xff\xd8"):
        raise JPEGInvalid("not a JPEG: it does not start with the SOI marker FF D8")
    if rotation == 0:
        return data
    tiff = b"MM\x00\x2a\x00\x00\x00\x08" + struct.pack(
        ">HHHIHHI", 1, 0x0112, 3, 1, _ORIENTATION[rotation], 0, 0
    )
    return data[:2] + _segment(0xE1, b"Exif\x00\x00" + tiff) + data[2:]

"""The block JPEG encoder and the MJPEG helpers, checked by decoding with Pillow."""

from __future__ import annotations

import io

import pytest

from clawseed_edge.peripherals.camera.jpeg import (
    JPEGInvalid,
    complete_mjpeg,
    encode_blocks,
    jpeg_size,
    split_mjpeg,
    with_rotation,
)

Image = pytest.importorskip("PIL.Image")


def decode(data: bytes):  # type: ignore[no-untyped-def]
    im = Image.open(io.BytesIO(data))
    im.load()
    return im


def strip_dht(data: bytes) -> bytes:
    """``data`` without its DHT segment: what many UVC webcams send."""
    i = data.index(b"\xff\xc4")
    length = int.from_bytes(data[i + 2 : i + 4], "big")
    return data[:i] + data[i + 2 + length :]


def test_each_block_decodes_to_its_colour() -> None:
    blocks = [[((x * 37) % 256, (y * 53) % 256, 200) for x in range(10)] for y in range(6)]
    im = decode(encode_blocks(blocks, quality=95))
    assert im.size == (80, 48)
    for y in range(6):
        for x in range(10):
            got = im.getpixel((x * 8 + 4, y * 8 + 4))
            assert all(abs(g - w) <= 6 for g, w in zip(got, blocks[y][x], strict=True))


def test_a_byte_0xff_in_the_scan_is_stuffed() -> None:
    # White and black alternating gives DC differences whose bits make 0xFF bytes.
    blocks = [[(255, 255, 255) if (x + y) % 2 else (0, 0, 0) for x in range(16)] for y in range(8)]
    data = encode_blocks(blocks)
    im = decode(data)
    assert im.getpixel((12, 4))[0] > 240 and im.getpixel((4, 4))[0] < 15


def test_ragged_or_empty_frames_are_refused() -> None:
    with pytest.raises(JPEGInvalid):
        encode_blocks([])
    with pytest.raises(JPEGInvalid):
        encode_blocks([[(0, 0, 0)] * 2, [(0, 0, 0)]])


def test_a_frame_without_huffman_tables_is_completed() -> None:
    data = encode_blocks([[(10, 200, 30)] * 8] * 6)
    bare = strip_dht(data)
    assert b"\xff\xc4" not in bare
    fixed = complete_mjpeg(bare)
    assert fixed.count(b"\xff\xc4") == 1  # strict decoders need the tables in the file
    assert decode(fixed).getpixel((4, 4))[1] > 180
    assert complete_mjpeg(data) == data  # a complete frame is left alone


def test_size_and_split_of_a_stream() -> None:
    a = encode_blocks([[(1, 2, 3)] * 8] * 6)
    b = encode_blocks([[(200, 2, 3)] * 16] * 12)
    assert jpeg_size(b) == (128, 96)
    assert split_mjpeg(b"junk" + a + b + a[:40]) == [a, b]
    with pytest.raises(JPEGInvalid):
        jpeg_size(b"\x89PNG....")


@pytest.mark.parametrize(("rotation", "orientation"), [(90, 6), (180, 3), (270, 8)])
def test_rotation_is_an_exif_orientation(rotation: int, orientation: int) -> None:
    data = encode_blocks([[(1, 2, 3)] * 8] * 6)
    im = decode(with_rotation(data, rotation))
    assert im.getexif()[0x0112] == orientation
    assert with_rotation(data, 0) == data

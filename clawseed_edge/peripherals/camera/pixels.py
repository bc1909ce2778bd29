"""Where pixels are needed: the motion detector's thumbnail and a narrower snapshot.

The only camera module that imports Pillow (the optional ``camera`` extra), and only when called:
a camera with motion off and snapshots at their configured width never loads it. JPEG's DCT
scaling (``Image.draft``) decodes at 1/2, 1/4 or 1/8 size, so a thumbnail of a 640x480 frame
never builds the full frame in memory.
"""

from __future__ import annotations

import io
from typing import Any

from clawseed_edge.api import HardwareError

__all__ = ["PILLOW_HINT", "grey_thumbnail", "narrower"]

PILLOW_HINT = (
    "this needs Pillow (motion detection, or a snapshot narrower than the camera's resolution "
    "from a real camera): install the camera extra, pip install 'clawseed-edge[camera]'"
)


def _image() -> Any:
    try:
        from PIL import Image
    except ImportError as exc:
        raise HardwareError(PILLOW_HINT) from exc
    return Image


def grey_thumbnail(data: bytes, size: tuple[int, int]) -> bytes:
    """``data`` (a JPEG) as ``size[0] * size[1]`` grey levels, row by row, one byte each.

    Raises:
        HardwareError: Pillow is missing (names the extra).
        ValueError: The bytes are not a JPEG Pillow can read.
    """
    image = _image()
    try:
        with image.open(io.BytesIO(data)) as im:
            im.draft("L", size)  # DCT scaling: decode at the smallest size at least ``size``
            return bytes(im.convert("L").resize(size).tobytes())
    except (OSError, SyntaxError) as exc:
        raise ValueError(f"the frame is not a JPEG Pillow can read ({exc})") from exc


def narrower(data: bytes, width: int, quality: int) -> bytes:
    """``data`` (a JPEG) scaled to ``width`` pixels wide (height to scale), JPEG again; a frame
    already that narrow is returned as it is.

    Raises:
        HardwareError: Pillow is missing, or the frame is not a JPEG it can read.
    """
    image = _image()
    try:
        with image.open(io.BytesIO(data)) as im:
            if im.width <= width:
                return data
            height = max(1, round(im.height * width / im.width))
            im.draft("RGB", (width, height))
            out = io.BytesIO()
            exif = im.info.get("exif")
            small = im.convert("RGB").resize((width, height))
            small.save(out, "JPEG", quality=quality, **({"exif": exif} if exif else {}))
            return out.getvalue()
    except (OSError, SyntaxError, ValueError) as exc:
        raise HardwareError(
            f"the camera's frame could not be scaled to {width} px ({exc}); ask without a "
            "width for the frame as the camera sent it"
        ) from exc

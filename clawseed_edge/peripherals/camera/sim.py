"""The simulated camera: a scene drawn in 8x8 blocks, encoded as a real JPEG.

Something in it always changes, so a snapshot and a motion detector have work to do: a ball
moves one step each frame, a clock shows the local time, and a door opens while the input named
by ``sim_door`` is active (the simulated door contact). :attr:`SimCamera.scene` says what the
last frame showed, for tests that check what a model was shown.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from .jpeg import RGB, encode_blocks

__all__ = ["SimCamera"]

_WALL: RGB = (200, 190, 170)
_FLOOR: RGB = (90, 90, 100)
_DOOR: RGB = (120, 70, 30)
_DOORWAY: RGB = (15, 15, 20)
_BALL: RGB = (220, 30, 30)
_DIGIT: RGB = (20, 20, 20)
# A 3x5 font for the clock, one string of 15 cells per digit (row by row).
_FONT = {
    "0": "111101101101111", "1": "010110010010111", "2": "111001111100111",
    "3": "111001111001111", "4": "101101111001001", "5": "111100111001111",
    "6": "111100111101111", "7": "111001001001001", "8": "111101111101111",
    "9": "111101111001111", ":": "000010000010000",
}  # fmt: skip


class SimCamera:
    """A camera backend that draws its frames (no device, no image library).

    Args:
        resolution: (width, height) in pixels; multiples of 8.
        quality: JPEG quality 1..100.
        rotation: Degrees clockwise (0, 90, 180, 270); drawn into the frame.
        door_open: Returns whether the simulated door contact is open (None: always closed).
        clock: Unix seconds (the drawn time of day).
    """

    source = "sim"

    def __init__(
        self,
        resolution: tuple[int, int] = (640, 480),
        *,
        quality: int = 80,
        rotation: int = 0,
        door_open: Callable[[], bool] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.resolution = resolution
        self.quality = quality
        self.rotation = rotation
        self.door_open = door_open
        self.clock = clock
        self.frame_number = 0
        self.scene: dict[str, Any] = {}
        self.opened = False

    def open(self) -> None:
        self.opened = True

    def close(self) -> None:
        self.opened = False

    def capture(self, width: int | None = None) -> bytes:
        """The next frame as JPEG bytes, ``width`` pixels wide (default: the resolution's)."""
        w, h = self.resolution
        cols = max(8, min(w, width or w) // 8)
        rows = max(6, round(cols * h / w))
        self.frame_number += 1
        door = bool(self.door_open()) if self.door_open is not None else False
        blocks = self._draw(cols, rows, door)
        for _ in range(self.rotation // 90):
            blocks = [list(r) for r in zip(*blocks[::-1], strict=True)]  # 90 degrees clockwise
        return encode_blocks(blocks, self.quality)

    def _draw(self, cols: int, rows: int, door: bool) -> list[list[RGB]]:
        floor = rows * 3 // 4
        grid = [[_WALL if y < floor else _FLOOR for _ in range(cols)] for y in range(rows)]
        # The door: right third of the picture, wall to floor; dark doorway when open.
        x0, x1, y0 = cols * 2 // 3, cols * 2 // 3 + max(2, cols // 6), rows // 4
        for y in range(y0, floor):
            for x in range(x0, min(x1, cols)):
                grid[y][x] = _DOORWAY if door else _DOOR
        # The ball: bounces along the floor line, one block a frame.
        span = max(1, x0 - 2)
        step = self.frame_number % (2 * span)
        bx = step if step < span else 2 * span - step
        for y in range(max(0, floor - 2), floor):
            for x in range(bx, min(bx + 2, cols)):
                grid[y][x] = _BALL
        # The clock: HH:MM in the top-left corner when there is room for it.
        local = time.localtime(self.clock())
        text = f"{local.tm_hour:02d}:{local.tm_min:02d}"
        if cols >= 4 * len(text) + 1 and rows >= 7:
            for i, ch in enumerate(text):
                cells = _FONT[ch]
                for k, cell in enumerate(cells):
                    if cell == "1":
                        grid[1 + k // 3][1 + 4 * i + k % 3] = _DIGIT
        self.scene = {
            "door": "open" if door else "closed",
            "ball": bx,
            "clock": text,
            "frame": self.frame_number,
        }
        return grid

"""Motion by frame difference on a small grey thumbnail, as a pure object.

:class:`MotionDetector` takes thumbnails (bytes, one grey level per pixel) and says whether the
scene moved: a pixel counts when it changed by more than ``threshold`` grey levels since the
previous thumbnail; motion is when at least ``min_area`` of the pixels count. It holds for
``hold_frames`` frames after the last moving one, so a person standing still in the doorway
does not flicker the state (a PIR's hold time).
"""

from __future__ import annotations

__all__ = ["THUMBNAIL", "MotionDetector"]

#: The thumbnail the detector compares (4,800 pixels: a few ms per frame on a Pi 3).
THUMBNAIL = (80, 60)


class MotionDetector:
    """Frame difference with a threshold, a minimum area and a hold time.

    Args:
        threshold: Grey levels (1..255) a pixel must change by to count.
        min_area: Fraction (0..1] of the pixels that must count.
        hold_frames: Frames the motion state stays on after the last moving frame.
    """

    def __init__(self, threshold: int = 25, min_area: float = 0.02, hold_frames: int = 3) -> None:
        self.threshold = threshold
        self.min_area = min_area
        self.hold_frames = hold_frames
        self.previous: bytes | None = None
        self.changed = 0.0
        self._quiet = hold_frames
        self.motion = False

    def feed(self, thumbnail: bytes) -> bool:
        """Compare with the previous thumbnail; the motion state after this frame."""
        previous, self.previous = self.previous, thumbnail
        if previous is None or len(previous) != len(thumbnail) or not thumbnail:
            return self.motion  # the first frame (or a new size) only sets the reference
        t = self.threshold
        moved = sum(1 for a, b in zip(previous, thumbnail, strict=True) if abs(a - b) > t)
        self.changed = moved / len(thumbnail)
        if self.changed >= self.min_area:
            self._quiet = 0
        else:
            self._quiet += 1
        self.motion = self._quiet < self.hold_frames
        return self.motion

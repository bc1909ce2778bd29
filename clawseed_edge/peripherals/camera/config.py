"""``[[cameras]]``: one table per camera (docs/camera.md).

Validated at load with msgspec like every table; :func:`check_camera` adds the checks a type
cannot say (the source's form, the hours' form, bounds), each naming the key.
"""

from __future__ import annotations

import re

import msgspec

from clawseed_edge.api import ConfigInvalid

__all__ = ["CameraConfig", "check_camera", "parse_hours"]

_SOURCE = r"^(sim|picamera|/dev/video\d{1,3})$"
_HOURS = r"^(\d{1,2}):(\d{2})-(\d{1,2}):(\d{2})$"
_NAME = r"^[A-Za-z_][A-Za-z0-9_]{0,39}$"
ROTATIONS = (0, 90, 180, 270)
MAX_PIXELS = 1920 * 1080


class CameraConfig(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, frozen=True):
    """One camera.

    Attributes:
        name: The camera's name (``porch_cam``): the tool's argument, the motion state's device.
        source: ``"sim"``, ``"picamera"`` (a Pi camera through picamera2) or ``"/dev/videoN"``
            (a USB webcam through V4L2, MJPEG).
        resolution: ``[width, height]`` of a snapshot, in pixels (at most 1920x1080).
            :attr:`size` is the same as a tuple.
        fps: Frames per second the motion detector looks at; 0 turns motion off (the
            default: nothing decodes pixels then).
        rotation: 0, 90, 180 or 270 degrees clockwise, written as the JPEG's EXIF orientation
            (the simulated camera draws it).
        jpeg_quality: 1..100.
        approval: Every snapshot asks a person first (privacy), whatever the autonomy.
        allowed_hours: ``"07:00-22:00"`` local time; outside, snapshots are refused ("" any time;
            ``"22:00-06:00"`` spans midnight).
        max_per_minute: Snapshots this camera takes per minute, for every caller together.
        keep_snapshots: Snapshots kept in the workspace per camera (oldest dropped).
        max_snapshot_bytes: A larger frame is refused, not stored or sent.
        motion_threshold: Grey levels (0..255) a thumbnail pixel must change by to count.
        motion_min_area: Fraction (0..1) of the thumbnail that must change to be motion.
        sim_door: For ``source = "sim"``: the input device whose state opens the drawn door.
    """

    name: str
    source: str = "sim"
    resolution: list[int] = msgspec.field(default_factory=lambda: [640, 480])
    fps: float = 0.0
    rotation: int = 0
    jpeg_quality: int = 80
    approval: bool = False
    allowed_hours: str = ""
    max_per_minute: int = 6
    keep_snapshots: int = 20
    max_snapshot_bytes: int = 2_000_000
    motion_threshold: int = 25
    motion_min_area: float = 0.02
    sim_door: str = ""

    @property
    def size(self) -> tuple[int, int]:
        """``resolution`` as ``(width, height)``."""
        return self.resolution[0], self.resolution[1]


def parse_hours(text: str) -> tuple[int, int] | None:
    """``"07:00-22:00"`` -> (420, 1320) minutes of the day; ``""`` -> None (any time).

    Raises:
        ValueError: Not ``HH:MM-HH:MM`` with real times of day.
    """
    if not text:
        return None
    m = re.match(_HOURS, text.strip())
    if m is None:
        raise ValueError(f'allowed_hours {text!r} is not HH:MM-HH:MM (e.g. "07:00-22:00")')
    h1, m1, h2, m2 = (int(g) for g in m.groups())
    if h1 > 23 or h2 > 24 or m1 > 59 or m2 > 59 or (h2 == 24 and m2):
        raise ValueError(f"allowed_hours {text!r} names a time of day that does not exist")
    return h1 * 60 + m1, h2 * 60 + m2


def check_camera(camera: CameraConfig, key: str, source: str | None = None) -> None:
    """Check what msgspec cannot; ``key`` is the table's place (``cameras[0]``).

    Raises:
        ConfigInvalid: Naming the key and what to write.
    """

    def bad(field: str, why: str) -> ConfigInvalid:
        return ConfigInvalid(why, file=source, key=f"{key}.{field}")

    if not re.match(_NAME, camera.name):
        raise bad("name", f"camera name {camera.name!r} must be letters, digits and _ (<= 40)")
    if not re.match(_SOURCE, camera.source):
        raise bad(
            "source",
            f'source {camera.source!r} is not a camera: write "sim", "picamera" or a V4L2 '
            'device such as "/dev/video0" (`v4l2-ctl --list-devices` lists them)',
        )
    if len(camera.resolution) != 2:
        raise bad("resolution", "resolution is [width, height], e.g. [640, 480]")
    w, h = camera.resolution
    if w < 64 or h < 48 or w * h > MAX_PIXELS or w % 8 or h % 8:
        raise bad(
            "resolution",
            f"resolution {w}x{h} is out of range: both sides multiples of 8, at least 64x48, "
            "at most 1920x1080 pixels",
        )
    if not 0 <= camera.fps <= 5:
        raise bad("fps", f"fps {camera.fps} is out of range: 0 (motion off) to 5 frames a second")
    if camera.rotation not in ROTATIONS:
        raise bad("rotation", f"rotation {camera.rotation} must be 0, 90, 180 or 270")
    if not 1 <= camera.jpeg_quality <= 100:
        raise bad("jpeg_quality", f"jpeg_quality {camera.jpeg_quality} must be 1..100")
    try:
        parse_hours(camera.allowed_hours)
    except ValueError as exc:
        raise bad("allowed_hours", str(exc)) from None
    if not 1 <= camera.max_per_minute <= 60:
        raise bad("max_per_minute", "max_per_minute must be 1..60")
    if not 1 <= camera.keep_snapshots <= 1000:
        raise bad("keep_snapshots", "keep_snapshots must be 1..1000")
    if not 10_000 <= camera.max_snapshot_bytes <= 20_000_000:
        raise bad("max_snapshot_bytes", "max_snapshot_bytes must be 10000..20000000")
    if not 1 <= camera.motion_threshold <= 255:
        raise bad("motion_threshold", "motion_threshold must be 1..255 grey levels")
    if not 0 < camera.motion_min_area <= 1:
        raise bad("motion_min_area", "motion_min_area must be a fraction above 0, at most 1")
    if camera.sim_door and camera.source != "sim":
        raise bad("sim_door", 'sim_door draws a door on source = "sim" only; remove it')

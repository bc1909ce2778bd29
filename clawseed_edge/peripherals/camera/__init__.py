"""Cameras as a peripheral: picamera2 (Pi cameras), V4L2 (USB webcams), a simulated camera.

JPEG bytes end to end; pixels are decoded only for motion detection (and a narrower snapshot
from a real camera), with Pillow imported then. See docs/camera.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from clawseed_edge.api.lazy import lazy_face

if TYPE_CHECKING:
    from .bank import CameraBackend, CameraBank, backend_for
    from .config import CameraConfig, check_camera
    from .jpeg import JPEGInvalid, complete_mjpeg, encode_blocks, jpeg_size, split_mjpeg
    from .motion import MotionDetector
    from .picamera import PiCamera
    from .sim import SimCamera
    from .store import Snapshot
    from .tools import CameraSnapshotTool
    from .v4l2 import MJPEGReplay, V4L2Camera

__all__ = [
    "CameraBackend",
    "CameraBank",
    "CameraConfig",
    "CameraSnapshotTool",
    "JPEGInvalid",
    "MJPEGReplay",
    "MotionDetector",
    "PiCamera",
    "SimCamera",
    "Snapshot",
    "V4L2Camera",
    "backend_for",
    "check_camera",
    "complete_mjpeg",
    "encode_blocks",
    "jpeg_size",
    "split_mjpeg",
]

_LAZY = {
    "CameraBackend": ".bank",
    "CameraBank": ".bank",
    "Snapshot": ".store",
    "backend_for": ".bank",
    "CameraConfig": ".config",
    "check_camera": ".config",
    "JPEGInvalid": ".jpeg",
    "complete_mjpeg": ".jpeg",
    "encode_blocks": ".jpeg",
    "jpeg_size": ".jpeg",
    "split_mjpeg": ".jpeg",
    "MotionDetector": ".motion",
    "PiCamera": ".picamera",
    "SimCamera": ".sim",
    "CameraSnapshotTool": ".tools",
    "MJPEGReplay": ".v4l2",
    "V4L2Camera": ".v4l2",
}
__getattr__, __dir__ = lazy_face(__name__, _LAZY, __all__)

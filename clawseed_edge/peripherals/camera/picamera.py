"""Raspberry Pi cameras through ``picamera2`` (over libcamera), JPEG from its encoder.

picamera2 is a system package of Raspberry Pi OS (``apt install python3-picamera2``), not on
the package index in a form that builds on a Pi: the service's venv sees it when it was made
with ``--system-site-packages`` (docs/camera.md). It is imported when a ``source = "picamera"``
camera opens. ``make_camera`` is the seam: a test passes a fake with picamera2's surface.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

from clawseed_edge.api import HardwareError

__all__ = ["PICAMERA2_HINT", "PiCamera"]

PICAMERA2_HINT = (
    "picamera2 is not importable: on Raspberry Pi OS install it with "
    "`sudo apt install python3-picamera2` and make the venv with --system-site-packages "
    "(docs/camera.md, Raspberry Pi cameras); `clawseed-edge doctor` checks it"
)


def _picamera2() -> Any:
    try:
        from picamera2 import Picamera2  # type: ignore[import-not-found,unused-ignore]
    except ImportError as exc:
        raise HardwareError(f"camera picamera: {PICAMERA2_HINT}") from exc
    return Picamera2()


class PiCamera:
    """A Pi camera module (CSI) through picamera2: a still configuration, JPEG encoded by
    picamera2 itself.

    Args:
        resolution: (width, height) of the main stream.
        quality: JPEG quality 1..100 (picamera2's ``options["quality"]``).
        make_camera: Returns a ``Picamera2``-like object (``create_still_configuration``,
            ``configure``, ``start``, ``capture_file(file, format="jpeg")``, ``stop``,
            ``close``, ``options``).
    """

    source = "picamera"

    def __init__(
        self,
        resolution: tuple[int, int] = (640, 480),
        *,
        quality: int = 80,
        make_camera: Callable[[], Any] = _picamera2,
    ) -> None:
        self.resolution = resolution
        self.quality = quality
        self._make_camera = make_camera
        self._camera: Any = None

    def open(self) -> None:
        """Claim the camera and start it.

        Raises:
            HardwareError: picamera2 is missing, or libcamera finds no camera or it is held by
                another process (the message says which).
        """
        try:
            camera = self._make_camera()
        except HardwareError:
            raise
        except (RuntimeError, IndexError, OSError) as exc:
            # picamera2 raises IndexError when libcamera lists no camera, RuntimeError when
            # another process holds it ("Failed to acquire camera").
            raise HardwareError(
                f"camera picamera cannot be opened ({exc}); check the ribbon cable, "
                "`rpicam-hello --list-cameras`, and that no other program uses the camera"
            ) from exc
        try:
            camera.options["quality"] = self.quality
            config = camera.create_still_configuration(main={"size": tuple(self.resolution)})
            camera.configure(config)
            camera.start()
        except Exception as exc:
            camera.close()
            raise HardwareError(f"camera picamera did not start ({exc})") from exc
        self._camera = camera

    def capture(self, width: int | None = None) -> bytes:
        """One still as JPEG bytes (``width`` is left to the caller to apply)."""
        if self._camera is None:
            raise HardwareError("camera picamera is not open")
        out = io.BytesIO()
        self._camera.capture_file(out, format="jpeg")
        return out.getvalue()

    def close(self) -> None:
        camera, self._camera = self._camera, None
        if camera is not None:
            try:
                camera.stop()
            finally:
                camera.close()

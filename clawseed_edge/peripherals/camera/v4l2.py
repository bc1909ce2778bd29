"""USB (UVC) webcams through V4L2 with ``linuxpy`` (pure Python): MJPEG frames straight from the
device, never decoded here.

``linuxpy`` is imported when a camera with ``source = "/dev/videoN"`` opens, not before. The
device is reached through ``open_device`` (linuxpy's ``Device`` by default), so a test replays
a recorded MJPEG stream through the same reading code (:class:`MJPEGReplay`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from clawseed_edge.api import HardwareError

from .jpeg import JPEGInvalid, complete_mjpeg, split_mjpeg

__all__ = ["MJPEGReplay", "V4L2Camera"]

#: Frames read after opening and thrown away: a UVC camera's first frames are often dark
#: (auto exposure settling) or torn.
WARMUP_FRAMES = 3
#: Broken frames tolerated in a row before a capture fails.
MAX_BAD_FRAMES = 5


def _linuxpy_device(path: str) -> Any:
    try:
        from linuxpy.video.device import Device
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise HardwareError(
            f"camera {path}: the V4L2 backend needs linuxpy; install the camera extra "
            "(pip install 'clawseed-edge[camera]')"
        ) from exc
    return Device(path)


class V4L2Camera:
    """A V4L2 camera that gives MJPEG frames (most UVC webcams do).

    Args:
        path: ``/dev/videoN``.
        resolution: (width, height) asked of the device; it may choose the nearest it has.
        open_device: ``path -> device`` with linuxpy's ``Device`` surface (``open``,
            ``close``, ``set_format(buffer_type, width, height, "MJPG")``, iteration yielding
            frames whose ``bytes()`` are the MJPEG data).
    """

    def __init__(
        self,
        path: str,
        resolution: tuple[int, int] = (640, 480),
        *,
        open_device: Callable[[str], Any] = _linuxpy_device,
    ) -> None:
        self.source = path
        self.resolution = resolution
        self._open_device = open_device
        self._device: Any = None
        self._frames: Iterator[Any] | None = None

    def open(self) -> None:
        """Open the device and start the MJPEG stream.

        Raises:
            HardwareError: The device is missing, busy (another program holds it) or gives no
                MJPEG; the message says which and what to check.
        """
        try:
            device = self._open_device(self.source)
            device.open()
        except HardwareError:
            raise
        except OSError as exc:
            if getattr(exc, "errno", None) == 16:  # EBUSY
                raise HardwareError(
                    f"camera {self.source} is held by another program; find it with "
                    f"`fuser -v {self.source}` and stop it"
                ) from exc
            raise HardwareError(
                f"camera {self.source} cannot be opened ({exc}); check that the webcam is "
                "plugged in and that the service's user is in the video group"
            ) from exc
        try:
            device.set_format(_buffer_type(), *self.resolution, "MJPG")
            self._frames = iter(device)
            for _ in range(WARMUP_FRAMES):
                next(self._frames, None)
        except Exception as exc:
            device.close()
            raise HardwareError(
                f"camera {self.source} did not start an MJPEG stream at "
                f"{self.resolution[0]}x{self.resolution[1]} ({exc}); `v4l2-ctl --list-formats-ext "
                f"-d {self.source}` lists what it can do"
            ) from exc
        self._device = device

    def capture(self, width: int | None = None) -> bytes:
        """The next complete frame as JPEG bytes (``width`` is left to the caller to apply).

        Raises:
            HardwareError: The stream ended or gave only broken frames.
        """
        if self._frames is None:
            raise HardwareError(f"camera {self.source} is not open")
        for _ in range(MAX_BAD_FRAMES):
            frame = next(self._frames, None)
            if frame is None:
                raise HardwareError(f"camera {self.source} stopped sending frames (unplugged?)")
            try:
                return complete_mjpeg(bytes(frame))
            except JPEGInvalid:
                continue  # a torn USB transfer: the next frame will do
        raise HardwareError(
            f"camera {self.source} sent {MAX_BAD_FRAMES} broken frames in a row; check the cable "
            "and the USB power"
        )

    def close(self) -> None:
        device, self._device, self._frames = self._device, None, None
        if device is not None:
            device.close()


def _buffer_type() -> Any:
    try:
        from linuxpy.video.device import BufferType
    except ImportError:
        return 1  # V4L2_BUF_TYPE_VIDEO_CAPTURE, for a replay without linuxpy
    return BufferType.VIDEO_CAPTURE


class MJPEGReplay:
    """A recorded MJPEG stream behind linuxpy's ``Device`` surface, for tests and demos.

    Frames are replayed in order and the stream loops. ``formats`` records each
    ``set_format`` call; ``busy`` makes ``open`` fail as a held device does.
    """

    def __init__(self, stream: bytes, *, busy: bool = False) -> None:
        self.frames = split_mjpeg(stream)
        self.busy = busy
        self.formats: list[tuple[int, int, str]] = []
        self.is_open = False
        self.served = 0

    def open(self) -> None:
        if self.busy:
            raise OSError(16, "Device or resource busy")
        self.is_open = True

    def close(self) -> None:
        self.is_open = False

    def set_format(self, buffer_type: Any, width: int, height: int, fourcc: str = "MJPG") -> None:
        self.formats.append((width, height, fourcc))

    def __iter__(self) -> Iterator[bytes]:
        while self.is_open and self.frames:
            yield self.frames[self.served % len(self.frames)]
            self.served += 1

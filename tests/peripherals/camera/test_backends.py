"""The V4L2 backend against a recorded MJPEG stream, picamera2 behind a fake of its API."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from clawseed_edge.api import HardwareError
from clawseed_edge.peripherals.camera.jpeg import encode_blocks, jpeg_size
from clawseed_edge.peripherals.camera.picamera import PiCamera
from clawseed_edge.peripherals.camera.sim import SimCamera
from clawseed_edge.peripherals.camera.v4l2 import WARMUP_FRAMES, MJPEGReplay, V4L2Camera

from .test_jpeg import decode, strip_dht

pytest.importorskip("PIL.Image")


def recorded_stream(frames: int = 6, cols: int = 8) -> tuple[bytes, list[bytes]]:
    """A webcam's MJPEG stream: frames without Huffman tables, back to back."""
    rows = cols * 3 // 4
    shots = [encode_blocks([[(i * 40 % 256, 80, 160)] * cols] * rows) for i in range(frames)]
    return b"".join(strip_dht(s) for s in shots), shots


def test_v4l2_reads_completed_frames_from_the_stream() -> None:
    stream, shots = recorded_stream()
    replay = MJPEGReplay(stream)
    camera = V4L2Camera("/dev/video0", (64, 48), open_device=lambda path: replay)
    camera.open()
    assert replay.formats == [(64, 48, "MJPG")]
    frame = camera.capture()
    # The warm-up frames were skipped; the frame decodes as the recorded one did.
    want = decode(shots[WARMUP_FRAMES]).getpixel((4, 4))
    assert decode(frame).getpixel((4, 4)) == want
    assert jpeg_size(frame) == (64, 48)
    camera.close()
    assert not replay.is_open


def test_v4l2_skips_a_torn_frame() -> None:
    stream, shots = recorded_stream(WARMUP_FRAMES + 2)
    frames = [*MJPEGReplay(stream).frames]
    frames[WARMUP_FRAMES] = b"\xff\xd8\xff\xd9"  # a torn USB transfer: SOI, EOI, nothing else
    replay = MJPEGReplay(b"".join(frames))
    camera = V4L2Camera("/dev/video0", (64, 48), open_device=lambda path: replay)
    camera.open()
    frame = camera.capture()
    assert decode(frame).getpixel((4, 4)) == decode(shots[WARMUP_FRAMES + 1]).getpixel((4, 4))


def test_v4l2_held_by_another_program_says_so() -> None:
    stream, _ = recorded_stream()
    camera = V4L2Camera("/dev/video2", open_device=lambda path: MJPEGReplay(stream, busy=True))
    with pytest.raises(HardwareError, match=r"held by another program.*fuser -v /dev/video2"):
        camera.open()


class FakePicamera2:
    """picamera2's surface that PiCamera uses; frames come from the simulated camera."""

    def __init__(self) -> None:
        self.options: dict[str, Any] = {}
        self.calls: list[str] = []
        self.config: dict[str, Any] | None = None
        self.sim = SimCamera((128, 96))

    def create_still_configuration(self, main: dict[str, Any]) -> dict[str, Any]:
        return {"main": main}

    def configure(self, config: dict[str, Any]) -> None:
        self.config = config
        self.calls.append("configure")

    def start(self) -> None:
        self.calls.append("start")

    def capture_file(self, file: io.BytesIO, format: str) -> None:
        assert format == "jpeg"
        file.write(self.sim.capture())

    def stop(self) -> None:
        self.calls.append("stop")

    def close(self) -> None:
        self.calls.append("close")


def test_picamera_configures_captures_and_releases() -> None:
    fake = FakePicamera2()
    camera = PiCamera((128, 96), quality=70, make_camera=lambda: fake)
    camera.open()
    assert fake.options["quality"] == 70
    assert fake.config == {"main": {"size": (128, 96)}}
    assert jpeg_size(camera.capture()) == (128, 96)
    camera.close()
    assert fake.calls == ["configure", "start", "stop", "close"]


def test_picamera_missing_or_held_is_explained() -> None:
    def held() -> Any:
        raise RuntimeError("Failed to acquire camera: Device or resource busy")

    with pytest.raises(HardwareError, match="no other program uses the camera"):
        PiCamera(make_camera=held).open()
    try:
        import picamera2  # type: ignore[import-not-found,unused-ignore]  # noqa: F401
    except ImportError:
        with pytest.raises(HardwareError, match=r"python3-picamera2.*system-site-packages"):
            PiCamera().open()


async def test_a_webcam_that_stops_is_reopened_by_the_next_snapshot(tmp_path: Path) -> None:
    from clawseed_edge.peripherals.camera.bank import CameraBank
    from clawseed_edge.peripherals.camera.config import CameraConfig

    stream, _ = recorded_stream(cols=16)  # 128x96
    replays: list[MJPEGReplay] = []

    def plug(path: str) -> MJPEGReplay:
        replays.append(MJPEGReplay(stream))
        return replays[-1]

    webcam = V4L2Camera("/dev/video0", (128, 96), open_device=plug)
    config = CameraConfig(name="shed", source="/dev/video0", resolution=[128, 96])
    cameras = CameraBank([config], tmp_path, backends={"shed": webcam})
    first = await cameras.snapshot("shed", width=64)  # narrower: scaled with Pillow
    assert jpeg_size(first.jpeg) == (64, 48)
    replays[-1].frames = []  # unplugged: the stream ends
    with pytest.raises(HardwareError, match="stopped sending frames"):
        await cameras.snapshot("shed")
    await cameras.snapshot("shed")  # plugged in again: opened afresh
    assert len(replays) == 2 and not replays[0].is_open
    await cameras.disconnect()

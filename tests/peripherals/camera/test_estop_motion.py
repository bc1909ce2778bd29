"""The emergency stop halts a camera's motion detector; a person's reset starts it again
(no service restart), and nothing else: no output is switched."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from clawseed_edge.api import DeviceState, StateFeed
from clawseed_edge.channels.estop import EmergencyStop
from clawseed_edge.peripherals.camera.bank import CameraBank
from clawseed_edge.peripherals.camera.config import CameraConfig
from clawseed_edge.peripherals.camera.sim import SimCamera


class DoorContact:
    """A wired input's state feed: the simulated door the camera draws."""

    def __init__(self) -> None:
        self.states = StateFeed()

    def set(self, value: float) -> None:
        self.states.publish(DeviceState("pi", "front_door", "button", "GPIO5", value, "input"))


async def _until(seen: list[float | None], value: float, changed: asyncio.Event) -> None:
    async with asyncio.timeout(10):
        while not seen or seen[-1] != value:
            changed.clear()
            await changed.wait()


def _no_frame_yet(cameras: CameraBank) -> bool:
    detector = cameras._cameras["porch_cam"].detector
    return detector is None or detector.previous is None


async def _first_frame(cameras: CameraBank) -> None:
    # A detector's first frame is its reference: the door must open after it to be motion.
    async with asyncio.timeout(10):
        while _no_frame_yet(cameras):  # noqa: ASYNC110 (a detector signals no first frame)
            await asyncio.sleep(0.02)


async def test_motion_comes_back_after_an_estop_reset_without_a_restart(tmp_path: Path) -> None:
    pytest.importorskip("PIL.Image")
    door = DoorContact()
    config = CameraConfig(
        name="porch_cam", resolution=[160, 120], fps=5, sim_door="front_door", motion_min_area=0.05
    )
    cameras = CameraBank([config], tmp_path / "snapshots")
    cameras.follow([door])
    seen: list[float | None] = []
    changed = asyncio.Event()

    def on_state(update: object) -> None:
        seen.append(getattr(update, "value", None))
        changed.set()

    await cameras.connect()
    cameras.states.subscribe(on_state)
    backend = cameras._cameras["porch_cam"].backend
    assert isinstance(backend, SimCamera)
    stop = EmergencyStop([cameras])
    try:
        await _first_frame(cameras)
        door.set(1.0)  # motion works before the stop
        await _until(seen, 1.0, changed)
        door.set(0.0)
        await _until(seen, 0.0, changed)

        assert await stop("test") == []
        assert not backend.opened  # released, like an output
        assert cameras._cameras["porch_cam"].motion_task is None

        assert await stop.reset("a person") is True
        assert cameras._cameras["porch_cam"].motion_task is not None
        # Motion flows again: the door opens, the detector (reopening the camera) sees it.
        await _first_frame(cameras)
        door.set(1.0)
        await _until(seen, 1.0, changed)
        assert backend.opened
    finally:
        await cameras.disconnect()


async def test_a_reset_before_connect_or_after_disconnect_starts_nothing(tmp_path: Path) -> None:
    cameras = CameraBank([CameraConfig(name="porch_cam", fps=5)], tmp_path / "snapshots")
    stop = EmergencyStop([cameras])
    await stop("test")
    assert await stop.reset("a person") is True
    assert cameras._cameras["porch_cam"].motion_task is None  # connect starts it, not a reset
    await cameras.disconnect()
    await stop("test")
    assert await stop.reset("a person") is True
    assert cameras._cameras["porch_cam"].motion_task is None

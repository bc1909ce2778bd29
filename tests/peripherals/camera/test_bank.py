"""The camera bank: snapshots stored with a bound, limits for every caller, release, motion."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from clawseed_edge.api import (
    DeviceNotFound,
    DeviceState,
    PeripheralClosed,
    PolicyDenied,
    PolicyRateLimited,
    StateFeed,
)
from clawseed_edge.peripherals.camera.bank import CameraBank
from clawseed_edge.peripherals.camera.config import CameraConfig
from clawseed_edge.peripherals.camera.jpeg import jpeg_size
from clawseed_edge.peripherals.camera.sim import SimCamera


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def bank(tmp_path: Path, **kw: object) -> tuple[CameraBank, SimCamera, Clock]:
    clock = Clock()
    config = CameraConfig(name="porch_cam", resolution=[160, 120], **kw)  # type: ignore[arg-type]
    sim = SimCamera(config.size, door_open=None)
    cameras = CameraBank([config], tmp_path / "snapshots", backends={"porch_cam": sim}, clock=clock)
    return cameras, sim, clock


async def test_snapshots_are_stored_and_the_oldest_dropped(tmp_path: Path) -> None:
    cameras, sim, clock = bank(tmp_path, keep_snapshots=3, max_per_minute=60)
    await cameras.connect()
    shots = []
    for _ in range(5):
        clock.now += 1
        shots.append(await cameras.snapshot("porch_cam"))
    files = sorted((tmp_path / "snapshots" / "porch_cam").glob("*.jpg"))
    assert [f.read_bytes() for f in files] == [s.jpeg for s in shots[-3:]]
    assert cameras.latest("porch_cam") == shots[-1].path
    assert sim.opened
    await cameras.disconnect()
    assert not sim.opened  # released like any output
    with pytest.raises(PeripheralClosed):
        await cameras.snapshot("porch_cam")


async def test_width_is_bounded_and_drawn_by_the_simulation(tmp_path: Path) -> None:
    cameras, _, _ = bank(tmp_path)
    shot = await cameras.snapshot("porch_cam", width=80)
    assert (shot.width, shot.height) == jpeg_size(shot.jpeg) == (80, 64)
    assert (await cameras.snapshot("porch_cam", width=10_000)).width == 160
    await cameras.disconnect()


async def test_rate_limit_counts_every_caller(tmp_path: Path) -> None:
    cameras, _, clock = bank(tmp_path, max_per_minute=2)
    await cameras.snapshot("porch_cam")
    await cameras.snapshot("porch_cam")
    with pytest.raises(PolicyRateLimited, match=r"max_per_minute.*in 60 s"):
        await cameras.snapshot("porch_cam")
    clock.now += 61
    await cameras.snapshot("porch_cam")
    await cameras.disconnect()


async def test_allowed_hours_span_midnight(tmp_path: Path) -> None:
    cameras, _, _ = bank(tmp_path, allowed_hours="22:00-06:00")
    minutes = [23 * 60]
    cameras._local_minutes = lambda: minutes[0]
    await cameras.snapshot("porch_cam")
    minutes[0] = 12 * 60
    with pytest.raises(PolicyDenied, match=r"only between 22:00-06:00"):
        await cameras.snapshot("porch_cam")
    await cameras.disconnect()


async def test_unknown_camera_names_the_cameras(tmp_path: Path) -> None:
    cameras, _, _ = bank(tmp_path)
    with pytest.raises(DeviceNotFound, match=r"'garage'.*cameras are: porch_cam"):
        await cameras.snapshot("garage")
    await cameras.disconnect()


async def test_estop_releases_the_camera_and_a_snapshot_reopens_it(tmp_path: Path) -> None:
    cameras, sim, _ = bank(tmp_path)
    await cameras.snapshot("porch_cam")
    await cameras.apply_safe_state()
    assert not sim.opened
    await cameras.snapshot("porch_cam")
    assert sim.opened
    await cameras.disconnect()


class DoorContact:
    """A peripheral with a door contact's state feed (what a wired input publishes)."""

    def __init__(self) -> None:
        self.states = StateFeed()

    def set(self, value: float) -> None:
        self.states.publish(DeviceState("pi", "front_door", "button", "GPIO5", value, "input"))


async def test_the_simulated_door_opens_with_its_contact_and_motion_follows(
    tmp_path: Path,
) -> None:
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
    shot = await cameras.snapshot("porch_cam")
    backend = cameras._cameras["porch_cam"].backend
    assert isinstance(backend, SimCamera) and backend.scene["door"] == "closed"
    async with asyncio.timeout(10):
        await changed.wait()
    assert seen[-1] == 0.0  # the ball alone is under the minimum area
    door.set(1.0)
    async with asyncio.timeout(10):
        while 1.0 not in seen:
            changed.clear()
            await changed.wait()
    shot = await cameras.snapshot("porch_cam")
    assert backend.scene["door"] == "open"
    assert shot.jpeg
    await cameras.disconnect()

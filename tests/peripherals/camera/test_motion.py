"""Motion as an input: the detector as a pure object, and a rule on ``porch_cam.motion`` that
takes a picture when the simulated door (a MockFactory door contact) opens."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from clawseed_edge.agent import AgentBuilder, SecurityPolicy
from clawseed_edge.peripherals.camera.bank import CameraBank
from clawseed_edge.peripherals.camera.config import CameraConfig
from clawseed_edge.peripherals.camera.motion import MotionDetector
from clawseed_edge.peripherals.camera.sim import SimCamera
from clawseed_edge.scheduler.automation_spec import known_names
from clawseed_edge.scheduler.automation_store import AutomationStore
from clawseed_edge.scheduler.automation_tools import add_automation
from clawseed_edge.scheduler.automations import Automations
from clawseed_edge.state import StateDB
from clawseed_edge.testing import ScriptedProvider
from clawseed_edge.testing.hardware import press

DOOR = '[[devices]]\nname = "front_door"\npin = "GPIO5"\nkind = "button"\n'


def test_threshold_minimum_area_and_hold() -> None:
    detector = MotionDetector(threshold=20, min_area=0.25, hold_frames=2)
    still = bytes([100] * 16)
    small = bytes([200] * 2 + [100] * 14)  # 12.5 % changed: under the minimum area
    big = bytes([200] * 8 + [100] * 8)  # 50 % changed
    faint = bytes([110] * 16)  # every pixel, but under the threshold
    states = [detector.feed(f) for f in (still, small, still, faint, big, big, big, big)]
    # Under the area, under the threshold: quiet. A big change: motion, held for hold_frames
    # frames after it (big -> big is no change), then quiet.
    assert states == [False, False, False, False, True, True, False, False]


async def test_a_rule_on_camera_motion_takes_a_picture_of_the_open_door(
    sim_board: Any, tmp_path: Path
) -> None:
    pytest.importorskip("PIL.Image")
    board = await sim_board(DOOR)
    config = CameraConfig(
        name="porch_cam", resolution=[160, 120], fps=5, sim_door="front_door", motion_min_area=0.05
    )
    cameras = CameraBank([config], tmp_path / "snapshots")
    cameras.follow([board])
    agent = (
        AgentBuilder()
        .provider(ScriptedProvider([]))
        .peripherals([cameras])
        .security_policy(SecurityPolicy(autonomy="full", max_actions_per_hour=None))
        .platform("test")
        .build()
    )
    rule = {
        "name": "door_photo",
        "when": "porch_cam.motion",
        "do": {"tool": "camera_snapshot", "arguments": {"camera": "porch_cam"}},
    }
    async with await StateDB.open(tmp_path / "state.db") as db:
        known = known_names([board, cameras])
        assert "motion" in known["porch_cam"]
        auto = Automations(agent, store=AutomationStore(db), known=known)
        await add_automation(auto.store, rule, origin="cli", known=known, check_tool=None)  # type: ignore[arg-type]
        await auto.load()
        moving, looked = asyncio.Event(), asyncio.Event()

        def observe(update: Any) -> None:
            auto.observe(update)
            looked.set()
            if update.value == 1.0:
                moving.set()

        await cameras.connect()
        cameras.states.subscribe(observe)
        try:
            async with asyncio.timeout(10):
                await looked.wait()  # the first frame (door closed) is the reference
            assert await auto.evaluate(1.0) == []
            press(board, "front_door")  # the door contact opens: the drawn door opens
            async with asyncio.timeout(10):
                await moving.wait()
            (fired,) = await auto.evaluate(2.0)
            assert fired["event"] == "fire" and fired["ok"], fired
            path = cameras.latest("porch_cam")
            assert path is not None and path.stat().st_size > 0
            backend = cameras._cameras["porch_cam"].backend
            assert isinstance(backend, SimCamera) and backend.scene["door"] == "open"
        finally:
            await cameras.disconnect()
            await agent.aclose()

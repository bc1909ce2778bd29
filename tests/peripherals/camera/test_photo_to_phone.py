"""Photo when the door opens: the running service (sim pins, a simulated camera with motion, an
automation that notifies Telegram) sends the snapshot through the fake Bot API."""

from __future__ import annotations

from pathlib import Path

import pytest

from clawseed_edge.peripherals import PiGpio
from clawseed_edge.peripherals.camera.bank import CameraBank
from clawseed_edge.testing import ScriptedProvider
from clawseed_edge.testing.fake_servers import FakeBotApi
from clawseed_edge.testing.hardware import press
from tests.channels.telegram.conftest import OWNER, config, running_bot

CAMERA = """
[[devices]]
name = "front_door"
pin = "GPIO5"
kind = "button"

[[cameras]]
name = "porch_cam"
resolution = [160, 120]
fps = 5
motion_min_area = 0.05
sim_door = "front_door"

[[automations]]
name = "door_photo"
when = "porch_cam.motion"
do = { tool = "camera_snapshot", arguments = { camera = "porch_cam" } }
notify = ["telegram"]
"""


async def test_the_door_opens_and_the_phone_gets_the_photo(
    clawseed_home: Path, bot: FakeBotApi
) -> None:
    pytest.importorskip("PIL.Image")
    text = config(bot) + CAMERA
    async with running_bot(clawseed_home, bot, ScriptedProvider([], streaming=True), text) as svc:
        assert svc.runtime is not None
        peripherals = svc.runtime.peripherals
        pi = next(p for p in peripherals if isinstance(p, PiGpio))
        cameras = next(p for p in peripherals if isinstance(p, CameraBank))
        # The first frame (door closed) is the detector's reference: then open the door.
        await bot.wait_until(lambda: cameras.motion("porch_cam") is not None, what="motion on")
        await bot.wait_until(lambda: cameras.states.devices(), what="the first motion state")
        press(pi, "front_door")
        sent = await bot.wait_until(lambda: bot.photos, what="a photo")
    (photo,) = sent
    stored = cameras.latest("porch_cam")
    assert stored is not None
    assert photo.chat_id == OWNER and photo.photo == stored.read_bytes()
    assert photo.caption.startswith("Automation door_photo fired: Picture from camera porch_cam")

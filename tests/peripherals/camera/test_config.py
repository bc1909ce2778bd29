"""``[[cameras]]`` in a config file: checks that name the key, and the simulated door wired to a
real (MockFactory) door contact."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from clawseed_edge.api import ConfigInvalid
from clawseed_edge.config.file import load_config
from clawseed_edge.config.hardware import build_peripherals
from clawseed_edge.peripherals import PiGpio
from clawseed_edge.peripherals.camera.bank import CameraBank
from clawseed_edge.peripherals.camera.sim import SimCamera
from clawseed_edge.testing.hardware import press
from tests.config.test_hardware import write

DOOR = """
[hardware]
board = "sim"

[[devices]]
name = "front_door"
pin = "GPIO5"
kind = "button"
"""


@pytest.mark.parametrize(
    ("table", "key", "words"),
    [
        ('source = "/dev/ttyUSB0"', "cameras[0].source", '"/dev/video0"'),
        ("resolution = [100, 100]", "cameras[0].resolution", "multiples of 8"),
        ('allowed_hours = "7-22"', "cameras[0].allowed_hours", "HH:MM-HH:MM"),
        ("rotation = 45", "cameras[0].rotation", "0, 90, 180 or 270"),
        ('source = "picamera"\nsim_door = "x"', "cameras[0].sim_door", 'source = "sim"'),
    ],
)
def test_a_bad_camera_names_the_key(tmp_path: Path, table: str, key: str, words: str) -> None:
    path = write(tmp_path, f'[[cameras]]\nname = "porch_cam"\n{table}\n')
    with pytest.raises(ConfigInvalid) as info:
        load_config(path)
    assert info.value.key == key
    assert words in str(info.value)


def test_a_camera_name_is_unique_among_devices(tmp_path: Path) -> None:
    path = write(tmp_path, DOOR + '[[cameras]]\nname = "front_door"\n')
    with pytest.raises(ConfigInvalid, match="used twice"):
        load_config(path)


async def test_the_simulated_door_follows_the_wired_door_contact(tmp_path: Path) -> None:
    text = (
        DOOR + '[[cameras]]\nname = "porch_cam"\nresolution = [160, 120]\nsim_door = "front_door"\n'
    )
    loaded = load_config(write(tmp_path, text))
    peripherals = build_peripherals(
        loaded.config, loaded.source, sim=True, workspace=tmp_path / "workspace"
    )
    pi, cameras = peripherals
    assert isinstance(pi, PiGpio) and isinstance(cameras, CameraBank)
    for p in peripherals:
        await p.connect()
    try:
        backend = cameras._cameras["porch_cam"].backend
        assert isinstance(backend, SimCamera)
        shot = await cameras.snapshot("porch_cam")
        assert backend.scene["door"] == "closed"
        assert shot.path.parent == tmp_path / "workspace" / "snapshots" / "porch_cam"
        press(pi, "front_door")
        async with asyncio.timeout(5):
            while True:
                await cameras.snapshot("porch_cam")
                if backend.scene["door"] == "open":
                    break
                await asyncio.sleep(0.02)
    finally:
        for p in reversed(peripherals):
            await p.disconnect()

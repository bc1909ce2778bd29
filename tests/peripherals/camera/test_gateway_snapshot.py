"""The web app's view of a camera: the newest stored snapshot over the gateway, paired only."""

from __future__ import annotations

from pathlib import Path

import httpx

from clawseed_edge.peripherals.camera.bank import CameraBank
from clawseed_edge.testing import ScriptedProvider
from clawseed_edge.testing.gateway import DEFAULT_CONFIG, running_gateway

CAMERA = '\n[[cameras]]\nname = "porch_cam"\nresolution = [160, 120]\n'


async def test_the_latest_snapshot_is_served_to_a_paired_client(clawseed_home: Path) -> None:
    async with running_gateway(clawseed_home, ScriptedProvider([]), DEFAULT_CONFIG + CAMERA) as gw:
        token = await gw.pair()
        assert gw.service.runtime is not None
        cameras = next(p for p in gw.service.runtime.peripherals if isinstance(p, CameraBank))
        headers = {"Authorization": f"Bearer {token}"}
        async with httpx.AsyncClient(base_url=gw.url) as http:
            none_yet = await http.get("/api/cameras/porch_cam/latest.jpg", headers=headers)
            listed = (await http.get("/api/cameras", headers=headers)).json()
            shot = await cameras.snapshot("porch_cam")
            image = await http.get("/api/cameras/porch_cam/latest.jpg", headers=headers)
            unknown = await http.get("/api/cameras/garage/latest.jpg", headers=headers)
            stranger = await http.get("/api/cameras/porch_cam/latest.jpg")
    assert none_yet.status_code == 404 and "no picture yet" in none_yet.text
    assert listed == {"cameras": [{"name": "porch_cam", "latest": None}]}
    assert image.status_code == 200 and image.headers["content-type"] == "image/jpeg"
    assert image.content == shot.jpeg and image.headers["cache-control"] == "no-store"
    assert unknown.status_code == 404 and "porch_cam" in unknown.text
    assert stranger.status_code == 401

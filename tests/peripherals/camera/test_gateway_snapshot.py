"""The web app's view of a camera: the newest stored snapshot over the gateway, paired only."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import httpx

from clawseed_edge.api import ToolCall, ToolContext, ToolResultEvent
from clawseed_edge.channels.gateway.pictures import stored_pictures
from clawseed_edge.channels.gateway.protocol import turn_event_frame
from clawseed_edge.channels.gateway.transcript import _shown_tool
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


async def test_a_turns_picture_is_a_url_in_its_frame_and_served_by_name(
    clawseed_home: Path,
) -> None:
    async with running_gateway(clawseed_home, ScriptedProvider([]), DEFAULT_CONFIG + CAMERA) as gw:
        token = await gw.pair()
        assert gw.service.runtime is not None
        cameras = next(p for p in gw.service.runtime.peripherals if isinstance(p, CameraBank))
        tool = cameras.tools()[0]
        result = await tool.execute({"camera": "porch_cam"}, ToolContext(session_id="web"))
        assert result.success and result.images  # the model gets the JPEG ...
        frame = turn_event_frame(ToolResultEvent(ToolCall("camera_snapshot", {}, "c1"), result))
        assert frame is not None
        # ... the web client a URL to the stored file: no bytes, no base64 in the frame.
        [picture] = frame["pictures"]
        stored = Path(result.data["path"])
        assert picture == {
            "camera": "porch_cam",
            "url": f"/api/cameras/porch_cam/snapshots/{stored.name}",
        }
        assert result.images[0] not in json.dumps(frame) and len(json.dumps(frame)) < 2000
        headers = {"Authorization": f"Bearer {token}"}
        async with httpx.AsyncClient(base_url=gw.url) as http:
            image = await http.get(picture["url"], headers=headers)
            stranger = await http.get(picture["url"])
            other = await http.get("/api/cameras/porch_cam/snapshots/nope.jpg", headers=headers)
            escape = await http.get(
                "/api/cameras/porch_cam/snapshots/..%2F..%2Fconfig.toml", headers=headers
            )
            os.unlink(stored)  # dropped by keep_snapshots
            gone = await http.get(picture["url"], headers=headers)
    assert image.status_code == 200 and image.headers["content-type"] == "image/jpeg"
    assert image.content == base64.b64decode(result.images[0])
    assert stranger.status_code == 401
    assert other.status_code == 404 and "no longer keeps" in other.text
    assert escape.status_code == 404
    assert gone.status_code == 404 and "snapshot_gone" in gone.text


def test_a_reloaded_session_finds_the_picture_in_the_stored_text() -> None:
    text = (
        "Picture from camera porch_cam taken at 10:00:00: 160x120 JPEG, 1,234 bytes, saved as "
        "snapshots/porch_cam/porch_cam-20260101-100000-0001.jpg. The image is attached."
    )
    assert stored_pictures("camera_snapshot", text) == [
        {
            "camera": "porch_cam",
            "url": "/api/cameras/porch_cam/snapshots/porch_cam-20260101-100000-0001.jpg",
        }
    ]
    assert stored_pictures("shell", text) == []  # only a snapshot's result names its picture
    assert stored_pictures("camera_snapshot", "saved as snapshots/x/../../etc/passwd") == []
    shown = _shown_tool("camera_snapshot", text, {"camera": "porch_cam"})
    assert shown["pictures"][0]["camera"] == "porch_cam"
    assert "pictures" not in _shown_tool("camera_snapshot", "Error: " + text, {})

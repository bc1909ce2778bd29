"""A camera's snapshots reach Home Assistant's MQTT ``image`` entity, against a real mosquitto:
announced beside the motion binary sensor, the JPEG published raw and retained when a picture
is taken (by anyone), and nothing left on the broker with ``camera_images = false``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from clawseed_edge.service import Service
from clawseed_edge.testing.mqtt import MosquittoBroker, MqttRecorder

from .nodes import mqtt_node

pytest.importorskip("aiomqtt")

CONFIG = """
[provider]
name = "demo"
[hardware]
board = "sim"
[[cameras]]
name = "porch_cam"
resolution = [160, 120]
fps = 1
[mqtt]
enabled = true
host = "127.0.0.1"
port = {port}
node_id = "shed"
keepalive_s = 5
reconnect_max_s = 1
"""

CONFIG_TOPIC = "homeassistant/device/shed/config"
IMAGE = "clawseed/shed/camera/porch_cam/image"


def cameras(svc: Service) -> Any:
    assert svc.runtime is not None
    return next(p for p in svc.runtime.peripherals if p.name == "cameras")


def components(raw: bytes) -> dict[str, Any]:
    return dict(json.loads(raw)["cmps"]) if raw else {}


async def test_a_snapshot_is_published_raw_and_retained_for_the_image_entity(
    clawseed_home: Path, mosquitto: MosquittoBroker
) -> None:
    pytest.importorskip("PIL.Image")  # motion on (fps = 1): the motion binary sensor too
    async with MqttRecorder(mosquitto, "homeassistant/#", "clawseed/#") as ha:
        async with mqtt_node(clawseed_home, mosquitto, CONFIG, state_interval_s=0.5) as svc:
            raw = await ha.wait_for(CONFIG_TOPIC, lambda p: "shed_porch_cam_snapshot" in p.decode())
            cmps = components(raw)
            image = cmps["shed_porch_cam_snapshot"]
            assert image["p"] == "image"
            assert (image["image_topic"], image["content_type"]) == (IMAGE, "image/jpeg")
            # The motion binary sensor, from the camera's state feed: announced (again, when
            # the detector's first frame came after the first config) beside the image.
            raw = await ha.wait_for(CONFIG_TOPIC, lambda p: "shed_porch_cam" in components(p))
            motion = components(raw)["shed_porch_cam"]
            assert (motion["p"], motion["device_class"]) == ("binary_sensor", "motion")
            shot = await cameras(svc).snapshot("porch_cam")
            data = await ha.wait_for(IMAGE, lambda p: p == shot.jpeg)
            assert data[:2] == b"\xff\xd8" and data == shot.path.read_bytes()
            assert ha.retained[IMAGE] is False  # live
    # Retained: a Home Assistant that subscribes later gets the newest picture at once.
    async with MqttRecorder(mosquitto, IMAGE) as later:
        assert await later.wait_for(IMAGE) == shot.jpeg
        assert later.retained[IMAGE] is True


async def test_camera_images_off_announces_no_image_and_empties_the_retained_one(
    clawseed_home: Path, mosquitto: MosquittoBroker
) -> None:
    async with MqttRecorder(mosquitto, "homeassistant/#", "clawseed/#") as ha:
        async with mqtt_node(clawseed_home, mosquitto, CONFIG.replace("fps = 1", "fps = 0")) as svc:
            await ha.wait_for(CONFIG_TOPIC, lambda p: "shed_porch_cam_snapshot" in p.decode())
            shot = await cameras(svc).snapshot("porch_cam")
            await ha.wait_for(IMAGE, lambda p: p == shot.jpeg)
        off = CONFIG.replace("fps = 1", "fps = 0").replace(
            "reconnect_max_s = 1", "reconnect_max_s = 1\ncamera_images = false"
        )
        async with mqtt_node(clawseed_home, mosquitto, off) as svc:
            # The entity is deleted in HA (its platform alone) and the picture off the broker.
            raw = await ha.wait_for(
                CONFIG_TOPIC,
                lambda p: components(p).get("shed_porch_cam_snapshot") == {"p": "image"},
            )
            assert components(raw)["shed_porch_cam_snapshot"] == {"p": "image"}
            await ha.wait_for(IMAGE, lambda p: p == b"")
            count = ha.count(IMAGE)
            await cameras(svc).snapshot("porch_cam")
            await ha.wait_for("clawseed/shed/availability", lambda p: p == b"online")
        await ha.wait_for("clawseed/shed/availability", lambda p: p == b"offline")
        assert ha.count(IMAGE) == count  # nothing published while off
    async with MqttRecorder(mosquitto, "clawseed/#") as later:
        await later.wait_for("clawseed/shed/availability")
        assert IMAGE not in later.last  # the broker keeps no picture

"""Home Assistant discovery: a camera with motion on is a motion binary sensor."""

from __future__ import annotations

from pathlib import Path

from clawseed_edge.api import StateSource
from clawseed_edge.channels.mqtt.discovery import Topics, discovery_config
from clawseed_edge.peripherals.camera.bank import CameraBank
from clawseed_edge.peripherals.camera.config import CameraConfig


async def test_a_motion_camera_is_discovered_as_a_motion_binary_sensor(tmp_path: Path) -> None:
    cameras = CameraBank([CameraConfig(name="porch_cam", fps=1)], tmp_path)
    assert isinstance(cameras, StateSource)  # every channel's hardware view reads it
    cameras._publish("porch_cam", True)  # what the detector publishes on motion
    topics = Topics("homeassistant", "shed")
    config = discovery_config(topics, devices=cameras.states.devices(), readings=[])
    component = config["cmps"]["shed_porch_cam"]
    assert component["p"] == "binary_sensor"
    assert component["device_class"] == "motion"
    assert component["state_topic"] == topics.device_state("porch_cam")
    await cameras.disconnect()


def test_each_camera_is_an_image_entity_with_its_raw_jpeg_topic(tmp_path: Path) -> None:
    topics = Topics("homeassistant", "shed")
    config = discovery_config(topics, devices=[], readings=[], cameras=["porch_cam", "garden"])
    image = config["cmps"]["shed_porch_cam_snapshot"]
    assert image["p"] == "image"  # HA's MQTT image platform
    assert image["image_topic"] == topics.camera_image("porch_cam")
    assert image["image_topic"] == "clawseed/shed/camera/porch_cam/image"
    assert image["content_type"] == "image/jpeg"
    assert "url_topic" not in image  # HA takes one of the two, never both
    assert image["name"] == "porch cam snapshot"
    assert config["cmps"]["shed_garden_snapshot"]["image_topic"].endswith("/garden/image")
    # No camera, no image entity.
    config = discovery_config(topics, devices=[], readings=[])
    assert not [c for c in config["cmps"].values() if c["p"] == "image"]

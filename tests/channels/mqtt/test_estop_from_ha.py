"""Issue 35 item 12 (second half): ``[mqtt] estop_from_ha = false`` turns the Home Assistant
emergency-stop button off: it is removed from discovery and a press on its topic (which anyone
who may publish on the broker can send) does nothing. On (the default), a press stops."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from clawseed_edge.testing.mqtt import MosquittoBroker, MqttRecorder

from .nodes import mqtt_node
from .test_home_assistant import CONFIG

pytest.importorskip("aiomqtt")

PRESS = "clawseed/greenhouse/estop/press"
DISCOVERY = "homeassistant/device/greenhouse/config"
LIGHT = "clawseed/greenhouse/device/porch_light/{}"


@pytest.mark.parametrize("from_ha", [True, False], ids=["on", "off"])
async def test_the_ha_estop_button(
    clawseed_home: Path, mosquitto: MosquittoBroker, from_ha: bool
) -> None:
    config = CONFIG + f"estop_from_ha = {str(from_ha).lower()}\n"
    async with MqttRecorder(mosquitto, "homeassistant/#", "clawseed/#") as ha:
        async with mqtt_node(clawseed_home, mosquitto, config) as svc:
            stop = svc.emergency_stop
            assert stop is not None
            button = json.loads(await ha.wait_for(DISCOVERY, bool))["cmps"][
                "greenhouse_emergency_stop"
            ]
            await ha.wait_for(LIGHT.format("state"), lambda p: p == b"OFF")
            await ha.publish(PRESS, "PRESS")
            if from_ha:
                await ha.wait_for(PRESS, lambda p: p == b"PRESS")
                for _ in range(500):
                    if stop.count:
                        break
                    await asyncio.sleep(0.02)
                assert stop.count == 1
                assert button["command_topic"] == PRESS
                return
            # A command sent after the press is obeyed: the press was read and dropped.
            await ha.publish(LIGHT.format("set"), "ON")
            await ha.wait_for(LIGHT.format("state"), lambda p: p == b"ON")
            assert stop.count == 0
            assert button == {"p": "button"}, "the button is removed from Home Assistant"

"""`clawseed-edge sim press` / `sim set-input` drive a simulated input of the running service
over its control socket (issue 36, item 7): the same edge path as a finger on a pin, so Home
Assistant's binary sensors can be exercised in a hardware-in-the-loop test."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from clawseed_edge.cli.main import main
from clawseed_edge.testing import ScriptedProvider
from tests.channels.gateway.conftest import running_service

CONFIG = """
[provider]
name = "demo"
model = "demo-rules"
[gateway]
enabled = false
[hardware]
board = "sim"
[[devices]]
name = "doorbell"
pin = "GPIO5"
kind = "button"
bounce_ms = 0
[[devices]]
name = "front_door"
pin = "GPIO6"
kind = "digital_in"
pull_up = true
ha_device_class = "door"
[[devices]]
name = "porch_light"
pin = "GPIO17"
kind = "led"
"""


async def test_press_and_set_input_reach_the_state_feed_through_the_pins(
    clawseed_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from clawseed_edge.peripherals import PiGpio

    async with running_service(clawseed_home, ScriptedProvider([]), CONFIG) as service:
        assert service.runtime is not None
        board = next(p for p in service.runtime.peripherals if isinstance(p, PiGpio))
        seen: list[tuple[str, float | None]] = []
        board.states.subscribe(lambda u: seen.append((getattr(u, "device", ""), u.value)))  # type: ignore[union-attr]

        code = await asyncio.to_thread(main, ["sim", "press", "doorbell", "--hold", "0.1"])
        assert code == 0
        assert "doorbell pressed for 0.1 s" in capsys.readouterr().out
        for _ in range(200):  # the release's edge arrives through gpiozero's callback
            if [v for d, v in seen if d == "doorbell"] == [1.0, 0.0]:
                break
            await asyncio.sleep(0.01)
        assert [v for d, v in seen if d == "doorbell"] == [1.0, 0.0]
        assert board.pin_factory.pin("GPIO5").state == 1  # released: pulled up again

        assert await asyncio.to_thread(main, ["sim", "set-input", "front_door", "open"]) == 0
        assert "front_door is active" in capsys.readouterr().out
        assert board.pin_factory.pin("GPIO6").state == 0  # pull-up: active is low
        assert await asyncio.to_thread(main, ["sim", "set-input", "front_door", "0"]) == 0
        assert [v for d, v in seen if d == "front_door"] == [1.0, 0.0]

        # Outputs are not driven from outside; a bad value or name says what to write.
        assert await asyncio.to_thread(main, ["sim", "press", "porch_light"]) == 1
        assert "only inputs" in capsys.readouterr().err
        assert await asyncio.to_thread(main, ["sim", "set-input", "front_door", "ajar"]) == 1
        assert "1/on/active" in capsys.readouterr().err
        assert await asyncio.to_thread(main, ["sim", "press", "gate"]) == 1
        assert "inputs: doorbell, front_door" in capsys.readouterr().err


async def test_home_assistant_sees_a_simulated_door_open_and_close(
    clawseed_home: Path, mosquitto: object
) -> None:
    pytest.importorskip("aiomqtt")
    from clawseed_edge.testing.mqtt import MosquittoBroker, MqttRecorder

    assert isinstance(mosquitto, MosquittoBroker)
    config = CONFIG + f'[mqtt]\nenabled = true\nport = {mosquitto.port}\nnode_id = "house"\n'
    state = "clawseed/house/device/front_door/state"
    async with MqttRecorder(mosquitto, "homeassistant/#", "clawseed/#") as ha:
        async with running_service(clawseed_home, ScriptedProvider([]), config):
            raw = await ha.wait_for("homeassistant/device/house/config", lambda p: bool(p))
            door = json.loads(raw)["cmps"]["house_front_door"]
            assert door["p"] == "binary_sensor" and door["device_class"] == "door"
            await ha.wait_for(state, lambda p: p == b"OFF")
            assert await asyncio.to_thread(main, ["sim", "set-input", "front_door", "open"]) == 0
            await ha.wait_for(state, lambda p: p == b"ON")
            assert await asyncio.to_thread(main, ["sim", "set-input", "front_door", "closed"]) == 1
            assert await asyncio.to_thread(main, ["sim", "set-input", "front_door", "0"]) == 0
            await ha.wait_for(state, lambda p: p == b"OFF")

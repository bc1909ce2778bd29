"""One value everywhere (issue 36, item 16): the filtered value a sampled sensor records in its
history is the one MQTT (Home Assistant) and `hardware status` show; the raw one on request."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from clawseed_edge.cli.main import main
from clawseed_edge.testing import ScriptedProvider
from clawseed_edge.testing.mqtt import MosquittoBroker, MqttRecorder
from tests.channels.gateway.conftest import running_service

pytest.importorskip("aiomqtt")

CONFIG = """
[provider]
name = "demo"
model = "demo-rules"
[gateway]
enabled = false
[history]
flush_s = 1
[[sensors]]
name = "greenhouse"
driver = "ds18b20"
update_interval = "1s"
filters = [{ offset = -0.4 }]
[mqtt]
enabled = true
port = {port}
node_id = "shed"
"""
STATE = "clawseed/shed/sensor/greenhouse/state"


async def test_home_assistant_hardware_status_and_history_agree_on_the_filtered_value(
    clawseed_home: Path, mosquitto: MosquittoBroker, capsys: pytest.CaptureFixture[str]
) -> None:
    config = CONFIG.replace("{port}", str(mosquitto.port))
    async with MqttRecorder(mosquitto, "clawseed/#") as ha:
        async with running_service(clawseed_home, ScriptedProvider([]), config) as service:
            assert (
                await asyncio.to_thread(main, ["sim", "set", "greenhouse.temperature", "25"]) == 0
            )
            # Home Assistant gets 24.6 (25.0 through the offset), never a later raw 25.0.
            await ha.wait_for(STATE, lambda p: json.loads(p)["temperature"] == 24.6, timeout_s=20)
            history = service.recorder.history  # type: ignore[union-attr]
            await history.flush()
            s = await history.summary("greenhouse", "temperature", 0, 4e9, points=1)
            assert s is not None and s.last == 24.6
            capsys.readouterr()
            assert await asyncio.to_thread(main, ["hardware", "status"]) == 0
            shown = capsys.readouterr().out
            assert "24.6" in shown and "25" not in shown.split("sensors")[1]
            assert await asyncio.to_thread(main, ["hardware", "status", "--raw"]) == 0
            raw = capsys.readouterr().out
            assert "raw readings, before the filters" in raw and "25" in raw
            await asyncio.sleep(1.5)  # more samples: still only filtered values on MQTT
        values = [json.loads(p)["temperature"] for t, p in ha.history if t == STATE and p]
        assert 25.0 not in values[values.index(24.6) :]

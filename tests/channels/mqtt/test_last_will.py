"""kill -9 of a running service: the broker itself publishes the node's last will, ``offline``
(retained), so Home Assistant marks every entity unavailable."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from clawseed_edge.testing.mqtt import MosquittoBroker, MqttRecorder

pytest.importorskip("aiomqtt")

CONFIG = """
[provider]
name = "demo"
[hardware]
board = "sim"
[[devices]]
name = "porch_light"
pin = "GPIO17"
kind = "led"
[mqtt]
enabled = true
port = {port}
node_id = "shed"
"""
AVAILABILITY = "clawseed/shed/availability"


async def test_kill_9_of_the_service_makes_the_broker_publish_offline(
    tmp_path: Path, mosquitto: MosquittoBroker
) -> None:
    (tmp_path / "config.toml").write_text(CONFIG.replace("{port}", str(mosquitto.port)))
    env = {**os.environ, "CLAWSEED_HOME": str(tmp_path)}
    env.pop("NOTIFY_SOCKET", None)
    async with MqttRecorder(mosquitto, "clawseed/#") as ha:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "clawseed_edge",
            "run",
            "--sim",
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        try:
            await ha.wait_for(AVAILABILITY, lambda p: p == b"online", timeout_s=30)
            await ha.wait_for("clawseed/shed/device/porch_light/state", lambda p: p == b"OFF")
            proc.send_signal(signal.SIGKILL)
            async with asyncio.timeout(10):
                await proc.wait()
            await ha.wait_for(AVAILABILITY, lambda p: p == b"offline", timeout_s=20)
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
    # Retained: a Home Assistant that starts later learns it too.
    async with MqttRecorder(mosquitto, AVAILABILITY) as later:
        assert await later.wait_for(AVAILABILITY) == b"offline"
        assert later.retained[AVAILABILITY] is True

"""A node that floods the fleet call topic is rate-limited per node (a token bucket), logged once
per window, and dropped, while another node's calls still go through."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from clawseed_edge.channels.mqtt.fleet_calls import CallBuckets, FleetAnswerer
from clawseed_edge.testing.mqtt import MosquittoBroker, MqttRecorder

from .nodes import mqtt_node

pytest.importorskip("aiomqtt")

SHED = """
[provider]
name = "demo"
[autonomy]
level = "full"
[hardware]
board = "sim"
[[devices]]
name = "fan"
pin = "GPIO17"
kind = "relay"
[mqtt]
enabled = true
port = {port}
node_id = "shed"
max_commands_per_minute = 20
max_calls_per_node_per_minute = 5
"""


def call(sender: str, n: int) -> str:
    return json.dumps(
        {"id": f"c{n}", "from": sender, "tool": "gpio_read", "arguments": {"device": "fan"}}
    )


async def test_a_flooding_node_is_limited_and_another_is_still_answered(
    tmp_path: Path, mosquitto: MosquittoBroker, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    svc = mqtt_node(tmp_path, mosquitto, SHED)
    async with svc, MqttRecorder(mosquitto, "clawseed/+/reply") as peers:
        channel = next(c for c in svc.channels if c.name == "mqtt")
        await channel.connected.wait()  # type: ignore[attr-defined]
        for n in range(50):
            await peers.publish("clawseed/shed/call", call("flooder", n))
        # Sent after the flood, so taken after it: the greenhouse is still answered.
        await peers.publish("clawseed/shed/call", call("greenhouse", 1))
        reply = json.loads(await peers.wait_for("clawseed/greenhouse/reply"))
        assert reply["id"] == "c1" and reply["ok"] is True
        await peers.wait_for(
            "clawseed/flooder/reply", lambda p: peers.count("clawseed/flooder/reply") >= 5
        )
        await peers.publish("clawseed/shed/call", call("greenhouse", 2))
        await peers.wait_for("clawseed/greenhouse/reply", lambda p: json.loads(p)["id"] == "c2")
        assert peers.count("clawseed/flooder/reply") == 5  # the bucket's size, no more
        answerer = channel.answerer  # type: ignore[attr-defined]
        assert answerer.buckets.dropped["flooder"] == 45
    flood_lines = [r for r in caplog.records if "sends more than 5 fleet calls" in r.getMessage()]
    assert len(flood_lines) == 1  # said once per window, not 45 times


def test_the_bucket_refills_evenly_and_logs_once_per_window(
    caplog: pytest.LogCaptureFixture,
) -> None:
    now = [0.0]
    buckets = CallBuckets(6, clock=lambda: now[0], max_sources=3)
    assert [buckets.admit("a") for _ in range(8)] == [True] * 6 + [False] * 2
    assert buckets.admit("b")  # another node has its own bucket
    now[0] = 10.0  # 6 a minute: one more token after 10 s
    assert buckets.admit("a") and not buckets.admit("a")
    now[0] = 30.0
    assert [buckets.admit("a") for _ in range(3)] == [True, True, False]  # 20 s: 2 tokens
    assert caplog.text.count("sends more than 6") == 1
    now[0] = 100.0
    assert [buckets.admit("a") for _ in range(7)] == [True] * 6 + [False]
    assert caplog.text.count("sends more than 6") == 2  # a new window, said again
    for name in ("c", "d", "e"):  # bounded: the least recently seen is forgotten
        buckets.admit(name)
    assert len(buckets._buckets) == 3


def test_malformed_calls_are_dropped_and_said_once_a_minute(
    caplog: pytest.LogCaptureFixture,
) -> None:
    answerer = FleetAnswerer("shed", act=None, per_node_per_minute=5, clock=lambda: 0.0)
    for _ in range(20):
        assert answerer.take(b"{not json") is None
    assert caplog.text.count("malformed fleet call") == 1

"""Two nodes on one broker: each sees the other's retained description and availability, and
``clawseed-edge fleet list`` shows both, then the one that stopped as offline."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from clawseed_edge.channels.mqtt.fleet import MAX_NODES, FleetView
from clawseed_edge.cli.main import main
from clawseed_edge.service import Service
from clawseed_edge.testing.mqtt import MosquittoBroker

from .nodes import mqtt_node

pytest.importorskip("aiomqtt")

NODE = """
[provider]
name = "demo"
[hardware]
board = "sim"
[[devices]]
name = "{device}"
pin = "GPIO17"
kind = "relay"
approval = true
[mqtt]
enabled = true
port = {port}
node_id = "{node}"
# Named, so a stopped node stays listed (as offline) with its description.
nodes = ["greenhouse", "shed"]
"""


def node(home: Path, broker: MosquittoBroker, name: str, device: str) -> Service:
    return mqtt_node(home, broker, NODE.replace("{node}", name).replace("{device}", device))


async def test_two_nodes_see_each_other_and_fleet_list_shows_them(
    tmp_path: Path, mosquitto: MosquittoBroker, capsys: pytest.CaptureFixture[str]
) -> None:
    greenhouse = node(tmp_path / "greenhouse", mosquitto, "greenhouse", "pump")
    shed = node(tmp_path / "shed", mosquitto, "shed", "fan")
    async with greenhouse:
        async with shed:
            channel = next(c for c in greenhouse.channels if c.name == "mqtt")
            view = channel.fleet  # type: ignore[attr-defined]
            for _ in range(200):
                seen = view.get("shed")
                if seen is not None and seen.devices:
                    break
                await asyncio.sleep(0.05)
            assert seen is not None
            assert seen.online is True
            assert seen.devices == [{"name": "fan", "kind": "relay", "approval": True}]
            cli = ["--config", str(tmp_path / "greenhouse" / "config.toml"), "fleet", "list"]
            code = await asyncio.to_thread(main, [*cli, "--json"])
            out = capsys.readouterr().out
            assert code == 0, out
            listed = {n["node"]: n for n in json.loads(out)}
            assert listed["shed"]["state"] == "online"
            assert listed["greenhouse"]["devices"][0]["name"] == "pump"
        # The shed stopped: its availability says offline, its description stays.
        code = await asyncio.to_thread(main, cli)
        out = capsys.readouterr().out
        assert code == 0
        assert "shed: offline" in out and "fan (relay, approval)" in out
        assert "greenhouse: online" in out


def test_the_view_is_bounded_and_drops_malformed_descriptions(
    caplog: pytest.LogCaptureFixture,
) -> None:
    view = FleetView()
    assert not view.take("clawseed/shed/description", b"{not json")
    assert not view.take("clawseed/shed/description", b'{"devices": [{"name": "a b"}]}')
    assert not view.take("clawseed/shed/description", b"x" * 100_000)
    assert not view.take("clawseed/shed/availability", b"maybe")
    assert not view.take("clawseed/a+b/description", b"{}")
    assert view.nodes() == []
    for i in range(MAX_NODES + 5):
        view.take(f"clawseed/n{i}/availability", b"online")
    assert len(view.nodes()) == MAX_NODES
    assert view.take("clawseed/n0/description", b"")  # removed
    assert view.get("n0") is None
    assert "malformed" in caplog.text


SHED = """
[provider]
name = "demo"
[autonomy]
level = "{level}"
[hardware]
board = "sim"
[[devices]]
name = "fan"
pin = "GPIO17"
kind = "relay"
[[devices]]
name = "heater"
pin = "GPIO22"
kind = "relay"
approval = true
[mqtt]
enabled = true
port = {port}
node_id = "shed"
"""


def shed(home: Path, broker: MosquittoBroker, level: str) -> Service:
    return mqtt_node(home, broker, SHED.replace("{level}", level))


def pin(svc: Service, device: str) -> object:
    pi = next(p for p in svc.runtime.peripherals if p.name == "pi")  # type: ignore[union-attr]
    return next(s.value for s in pi.states.devices() if s.device == device)


async def wait_for_node(channel: object, name: str) -> None:
    for _ in range(200):
        seen = channel.fleet.get(name)  # type: ignore[attr-defined]
        if seen is not None and seen.devices and seen.online:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{name} never showed up")


async def test_a_fleet_call_is_decided_by_the_owning_nodes_policy(
    tmp_path: Path, mosquitto: MosquittoBroker
) -> None:
    greenhouse = node(tmp_path / "greenhouse", mosquitto, "greenhouse", "pump")
    async with greenhouse, shed(tmp_path / "shed", mosquitto, "full") as owner:
        caller = next(c for c in greenhouse.channels if c.name == "mqtt")
        await wait_for_node(caller, "shed")
        result = await caller.call("shed", "gpio_switch", {"device": "fan", "on": True})  # type: ignore[attr-defined]
        assert result.success, result.error
        assert pin(owner, "fan") == 1.0
        # The shed's own approval rule: nobody there can approve, so its policy refuses.
        result = await caller.call("shed", "gpio_switch", {"device": "heater", "on": True})  # type: ignore[attr-defined]
        assert not result.success and pin(owner, "heater") == 0.0
        assert "approv" in str(result.error).lower() or "no one" in str(result.error).lower()
        # Only device tools travel.
        result = await caller.call("shed", "shell", {"command": "id"})  # type: ignore[attr-defined]
        assert not result.success and "only device tools" in str(result.error)
    # The shed is gone: its last will / clean stop says offline, and the caller says so.
    async with node(tmp_path / "greenhouse", mosquitto, "greenhouse", "pump") as greenhouse:
        caller = next(c for c in greenhouse.channels if c.name == "mqtt")
        for _ in range(200):
            seen = caller.fleet.get("shed")  # type: ignore[attr-defined]
            if seen is not None and seen.online is False:
                break
            await asyncio.sleep(0.05)
        result = await caller.call("shed", "gpio_switch", {"device": "fan", "on": False})  # type: ignore[attr-defined]
        assert not result.success and str(result.error).startswith("shed is offline")
        result = await caller.call("barn", "gpio_switch", {"device": "fan", "on": False})  # type: ignore[attr-defined]
        assert "no node named 'barn'" in str(result.error)


async def test_read_only_autonomy_on_the_owner_refuses_a_fleet_call(
    tmp_path: Path, mosquitto: MosquittoBroker
) -> None:
    greenhouse = node(tmp_path / "greenhouse", mosquitto, "greenhouse", "pump")
    async with greenhouse, shed(tmp_path / "shed", mosquitto, "read_only") as owner:
        caller = next(c for c in greenhouse.channels if c.name == "mqtt")
        await wait_for_node(caller, "shed")
        result = await caller.call("shed", "gpio_switch", {"device": "fan", "on": True})  # type: ignore[attr-defined]
        assert not result.success and pin(owner, "fan") == 0.0
        assert "read" in str(result.error).lower()

"""End to end: the latched emergency stop holds on every way in, across a restart, until a
person resets it; the reset switches nothing back on.

One service with the gateway (web app, ``/mcp``), Telegram (a fake Bot API), Home Assistant
over a real Mosquitto, an automation, a scheduled job and the control socket, and a second
node on the same broker. Everything is driven through public surfaces: HTTP, MQTT topics, the
Bot API, the control socket and the CLI; the mock pin's history is what is asserted.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from clawseed_edge.cli.main import main
from clawseed_edge.config.file import load_config
from clawseed_edge.service import (
    ControlError,
    Service,
    ServiceOptions,
    control_path,
    control_request,
)
from clawseed_edge.testing import ScriptedProvider
from clawseed_edge.testing.fake_servers import FakeBotApi
from clawseed_edge.testing.hardware import mock_pin, press
from clawseed_edge.testing.mqtt import MosquittoBroker, MqttRecorder
from tests.channels.mqtt.test_fleet import node as shed_node

pytest.importorskip("aiomqtt")
mcp = pytest.importorskip("mcp")

TOKEN = "987654321:AAH-latch-test-token"
OWNER = 4242
CODE = "estop_latched"

GREENHOUSE = """
[provider]
name = "demo"
[autonomy]
level = "full"
[gateway]
enabled = true
port = 0
[mcp]
http = true
[channels.telegram]
enabled = true
allowed_users = [{owner}]
api_base = "{bot}"
poll_timeout_s = 1
[hardware]
board = "sim"
[[devices]]
name = "pump"
pin = "GPIO17"
kind = "relay"
initial = "on"
[[devices]]
name = "float_switch"
pin = "GPIO22"
kind = "button"
bounce_ms = 0
[[automations]]
name = "refill"
when = "float_switch.pressed"
do = {{ tool = "gpio_switch", arguments = {{ device = "pump", on = true }} }}
[[jobs]]
name = "morning_water"
every = "24h"
tool = "gpio_switch"
arguments = {{ device = "pump", on = true }}
[mqtt]
enabled = true
host = "127.0.0.1"
port = {port}
node_id = "greenhouse"
keepalive_s = 5
reconnect_max_s = 1
"""


def _service(home: Path, text: str, provider: ScriptedProvider, **options: Any) -> Service:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(text, encoding="utf-8")
    return Service(
        load_config(home / "config.toml"),
        ServiceOptions(
            sim=True,
            assemble={"provider": provider},
            say=lambda line: None,
            mqtt={"state_interval_s": 0.5},
            channels={"telegram": {"backoff_s": (0.05, 0.2), "watchdog_margin_s": 1.0}},
            **options,
        ),
    )


@contextlib.asynccontextmanager
async def greenhouse(
    home: Path, broker: MosquittoBroker, bot: FakeBotApi, provider: ScriptedProvider
) -> AsyncIterator[Service]:
    text = GREENHOUSE.format(owner=OWNER, bot=bot.url, port=broker.port)
    async with _service(home, text, provider) as service:
        yield service


def pump_levels(service: Service) -> list[float]:
    """Every level the pump's mock pin was driven to since this service opened it."""
    assert service.runtime is not None
    pi = next(p for p in service.runtime.peripherals if p.name == "pi")
    return [float(s.state) for s in mock_pin(pi, "pump").states]  # type: ignore[arg-type]


async def pair(service: Service) -> str:
    assert service.hub is not None and service.server is not None
    code = service.hub.pairing.new_code()
    async with httpx.AsyncClient(base_url=service.server.url) as http:
        answer = await http.post("/pair", headers={"X-Pairing-Code": code, "X-Client-Name": "t"})
    answer.raise_for_status()
    return str(answer.json()["token"])


async def web_switch(service: Service, token: str, on: bool) -> httpx.Response:
    assert service.server is not None
    async with httpx.AsyncClient(base_url=service.server.url) as http:
        return await http.post(
            "/api/peripherals/pump", json={"on": on}, headers={"Authorization": f"Bearer {token}"}
        )


async def mcp_switch(service: Service, token: str) -> Any:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    assert service.server is not None
    http2 = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
    url = service.server.url + "/mcp"
    async with mcp.Client(streamable_http_client(url, http_client=http2)) as client:
        return await client.call_tool("gpio_switch", {"device": "pump", "on": True})


async def refusal_of(coro: Any) -> str | None:
    """The service's error code for a refused control request (None: it was not refused)."""
    try:
        await coro
    except ControlError as exc:
        return exc.refusal
    return None


async def until(condition: Any, what: str) -> None:
    for _ in range(400):  # a bound on attempts, not a timing assertion
        if await condition():
            return
        await asyncio.sleep(0.025)
    raise AssertionError(f"never happened: {what}")


async def test_the_latch_holds_on_every_way_in_across_a_restart_until_a_person_resets_it(
    tmp_path: Path,
    clawseed_home: Path,
    mosquitto: MosquittoBroker,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", TOKEN)
    provider = ScriptedProvider(
        [ScriptedProvider.call("gpio_switch", device="pump", on=True), "I tried the pump."],
        streaming=True,
    )
    socket = control_path(clawseed_home)
    async with (
        FakeBotApi(token=TOKEN, max_poll_s=1.0) as bot,
        MqttRecorder(mosquitto, "clawseed/#", "homeassistant/#") as ha,
        shed_node(tmp_path / "shed", mosquitto, "shed", "fan") as shed,
    ):
        async with greenhouse(clawseed_home, mosquitto, bot, provider) as service:
            assert pump_levels(service)[-1] == 1.0  # on (its initial level)
            token = await pair(service)
            await ha.wait_for("clawseed/greenhouse/availability", lambda p: p == b"online")
            config = json.loads(await ha.wait_for("homeassistant/device/greenhouse/config"))
            by_name = {c["name"]: c for c in config["cmps"].values()}
            assert by_name["emergency stop latched"]["p"] == "binary_sensor"
            refusals = by_name["pump"]["json_attributes_topic"]

            assert await asyncio.to_thread(main, ["estop"]) == 0  # over the control socket
            at_stop = len(pump_levels(service))
            assert pump_levels(service)[-1] == 0.0

            # Home Assistant: the switch command is refused, the reason published.
            await ha.publish("clawseed/greenhouse/device/pump/set", "ON")
            refusal = await ha.wait_for(refusals)  # the switch entity's attributes
            assert json.loads(refusal)["code"] == CODE
            latched = await ha.wait_for(
                "clawseed/greenhouse/estop/state", lambda p: json.loads(p)["latched"]
            )
            assert "estop --reset" in json.loads(latched)["how_to_reset"]
            # The web app's device button.
            answer = await web_switch(service, token, True)
            assert answer.status_code == 403 and answer.json()["error"]["code"] == CODE
            # An MCP host's tools/call.
            result = await mcp_switch(service, token)
            assert result.is_error and f"[{CODE}]" in result.content[0].text
            # A Telegram message whose model calls gpio_switch: the tool result the model
            # reads is the refusal.
            bot.push_message(OWNER, "switch the pump on")
            await bot.wait_for_message(OWNER, "I tried the pump.")
            tool_turn = provider.requests[-1].messages[-1]
            assert tool_turn.role == "tool" and f"[{CODE}]" in tool_turn.content
            # An automation firing (the float switch pressed).
            assert service.runtime is not None
            press(next(p for p in service.runtime.peripherals if p.name == "pi"), "float_switch")

            async def refill_refused() -> bool:
                firings = (await control_request(socket, "automation_firings"))["firings"]
                return any(f"[{CODE}]" in f["detail"] and not f["ok"] for f in firings)

            await until(refill_refused, "the refill rule's firing recorded as refused")
            # `cron run-now` over the control socket.
            run_now = control_request(socket, "cron_run_now", name="morning_water")
            assert await refusal_of(run_now) == CODE
            # Another node's call over the fleet bus.
            caller = next(c for c in shed.channels if c.name == "mqtt")
            fleet = await caller.call("greenhouse", "gpio_switch", {"device": "pump", "on": True})  # type: ignore[attr-defined]
            assert not fleet.success and fleet.code == CODE
            # Visible: status and /metrics.
            status = await control_request(socket, "status")
            assert status["estop"]["latched"] is True
            assert service.server is not None
            async with httpx.AsyncClient(base_url=service.server.url) as http:
                metrics = await http.get("/metrics", headers={"Authorization": f"Bearer {token}"})
            assert "clawseed_estop_latched 1" in metrics.text
            # Not one pulse: from the stop on, the pump's pin never left its safe level.
            assert set(pump_levels(service)[at_stop - 1 :]) == {0.0}

        # A restart: the stop still holds, and the pump (initial = "on") never came on.
        fresh = ScriptedProvider(streaming=True)
        async with greenhouse(clawseed_home, mosquitto, bot, fresh) as service:
            assert set(pump_levels(service)) == {0.0}
            assert (await control_request(socket, "status"))["estop"]["latched"] is True
            token = await pair(service)
            answer = await web_switch(service, token, True)
            assert answer.status_code == 403 and answer.json()["error"]["code"] == CODE
            # A person resets it: the pump stays off ...
            assert await asyncio.to_thread(main, ["estop", "--reset"]) == 0
            assert set(pump_levels(service)) == {0.0}
            assert (await control_request(socket, "status"))["estop"]["latched"] is False
            # ... until the web app switches it on.
            answer = await web_switch(service, token, True)
            assert answer.status_code == 200, answer.text
            assert pump_levels(service)[-1] == 1.0

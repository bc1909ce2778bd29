"""One emergency stop from every entry point: the control socket, the gateway's HTTP API, a
signal (SIGUSR1), the hosting application's ``Service.estop``, and the web app's STOP button
(its API call, as app.js makes it: the web app's STOP is the gateway API's ``/api/estop``).

Each stop must abort the running turns of every channel (two gateway conversations, a webhook's
turn and the service's own input-event conversation here), pause the scheduler and drive the
outputs to their safe values, through the same function.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from clawseed_edge.service import Service, control_path, control_request
from clawseed_edge.service.inputs import EVENT_SESSION
from clawseed_edge.testing import ScriptedProvider
from clawseed_edge.testing.hardware import press

from .gateway.conftest import CONFIG, base_url, open_ws, pair_token, recv_until, running_service

# Full autonomy: the dashboard's switch needs no approval; the scheduler on, to be paused.
ESTOP_CONFIG = (
    CONFIG.replace('[autonomy]\nlevel = "supervised"', '[autonomy]\nlevel = "full"')
    + "\n[scheduler]\nenabled = true\n"
)


async def _until(check: Callable[[], bool]) -> None:
    for _ in range(1000):
        if check():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("not within 10 s")


async def _by_control_socket(service: Service, token: str) -> list[str]:
    answer = await control_request(control_path(service.loaded.home), "estop")
    return list(answer["failures"])


async def _by_gateway_api(service: Service, token: str) -> list[str]:
    # A script or dashboard of the user's own, on the documented HTTP API.
    async with httpx.AsyncClient(base_url=base_url(service)) as http:
        response = await http.post(
            "/api/estop",
            headers={"Authorization": f"Bearer {token}", "Accept": "application/json"},
            json={},
        )
    assert response.status_code == 200, response.text
    return list(response.json()["failures"])


async def _by_service(service: Service, token: str) -> list[str]:
    # An application that hosts the Service in its own code.
    return await service.estop("estop from the hosting application")


async def _by_signal(service: Service, token: str) -> list[str]:
    assert service.emergency_stop is not None
    before = service.emergency_stop.count
    remove = service.install_signal_handlers()
    try:
        os.kill(os.getpid(), signal.SIGUSR1)
        estop = service.emergency_stop
        await _until(lambda: estop.count > before and not estop.running)
    finally:
        remove()
    return []


async def _by_web_app(service: Service, token: str) -> list[str]:
    # What app.js's STOP button sends: POST /api/estop with the bearer token, no body.
    async with httpx.AsyncClient(base_url=base_url(service)) as http:
        response = await http.post("/api/estop", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 200, response.text
    return list(response.json()["failures"])


ENTRY_POINTS: dict[str, Callable[[Service, str], Awaitable[list[str]]]] = {
    "control-socket": _by_control_socket,
    "gateway-api": _by_gateway_api,
    "signal": _by_signal,
    "service": _by_service,
    "web-app": _by_web_app,
}


@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
async def test_an_estop_aborts_every_channels_turn_and_drives_outputs_safe(
    clawseed_home: Path, entry: str
) -> None:
    # Every model request hangs: each conversation's turn is running when the stop comes.
    provider = ScriptedProvider(["never reached"] * 10, delay_s=3600)
    async with running_service(clawseed_home, provider, ESTOP_CONFIG) as service:
        assert service.runtime is not None and service.scheduler is not None
        token = await pair_token(service)
        headers = {"Authorization": f"Bearer {token}"}
        async with httpx.AsyncClient(base_url=base_url(service), headers=headers) as http:
            switched = await http.post("/api/peripherals/porch_light", json={"on": True})
        assert switched.status_code == 200, switched.text
        pi: Any = service.runtime.peripherals[0]
        assert pi.pin_states()["GPIO17"]["value"] == 1
        phone = await open_ws(service, token, "session_id=phone")
        tablet = await open_ws(service, token, "session_id=tablet")
        for ws in (phone, tablet):
            await recv_until(ws, "connected")
            await ws.send(json.dumps({"type": "message", "content": "think about it"}))
        press(pi, "doorbell")  # the service's own channel: an input event starts a turn
        webhook_http = httpx.AsyncClient(base_url=base_url(service), headers=headers)
        webhook = asyncio.create_task(
            webhook_http.post(
                "/webhook", json={"message": "water the plants", "session_id": "hook"}
            )
        )
        agent = service.runtime.agent
        await _until(lambda: len(provider.requests) == 4)
        assert agent.is_running(EVENT_SESSION) and agent.is_running("hook")

        failures = await ENTRY_POINTS[entry](service, token)

        ends = [(await recv_until(ws, "aborted"))[-1] for ws in (phone, tablet)]
        await _until(lambda: not agent.is_running(EVENT_SESSION))
        hooked = (await asyncio.wait_for(webhook, 10)).json()
        await webhook_http.aclose()
        for ws in (phone, tablet):
            await ws.close()
        paused = service.scheduler.paused
        light = pi.pin_states()["GPIO17"]["value"]
    assert failures == []
    assert [end["type"] for end in ends] == ["aborted", "aborted"]
    assert hooked["error"]["code"] == "aborted", "a webhook's turn is a turn too"
    assert light == 0, "the output is in its safe state"
    assert paused is not None, "the scheduler is paused until `cron resume`"


async def test_every_entry_point_calls_the_same_function(clawseed_home: Path) -> None:
    async with running_service(clawseed_home, ScriptedProvider(), ESTOP_CONFIG) as service:
        assert service.hub is not None and service.emergency_stop is not None
        assert service.hub.estop is service.emergency_stop
        token = await pair_token(service)
        for entry in ENTRY_POINTS.values():
            before = service.emergency_stop.count
            await entry(service, token)
            assert service.emergency_stop.count == before + 1

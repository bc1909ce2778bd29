"""The front door: the gateway listens before the service has started the rest.

Unit: :class:`FrontDoor` answers /health and /ready while starting, holds other requests until
the app is installed (bounded), then steps aside. Service: ``Service.start`` opens the door
before it assembles the runtime, a phone's request made meanwhile is answered once the gateway
is up, and a busy port fails before any hardware is set up.
"""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path
from typing import Any

import httpx
import pytest

from clawseed_edge.channels.gateway.door import FrontDoor
from clawseed_edge.channels.gateway.errors import GatewayBindFailed
from clawseed_edge.config.file import load_config
from clawseed_edge.service import Service, ServiceOptions
from clawseed_edge.testing import ScriptedProvider


async def _call(app: Any, scope: dict[str, Any]) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    return sent


def _http(path: str, method: str = "GET") -> dict[str, Any]:
    return {"type": "http", "method": method, "path": path, "headers": []}


def _status_and_body(sent: list[dict[str, Any]]) -> tuple[int, dict[str, Any], dict[bytes, bytes]]:
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], json.loads(body), dict(start["headers"])


async def test_health_answers_starting_and_ready_refuses_until_installed() -> None:
    door = FrontDoor()
    status, body, _ = _status_and_body(await _call(door, _http("/health")))
    assert (status, body["status"]) == (200, "starting")
    status, body, headers = _status_and_body(await _call(door, _http("/ready")))
    assert (status, body["status"]) == (503, "starting")
    assert headers[b"retry-after"] == b"2"


async def test_a_request_waits_for_the_app_then_is_served_by_it() -> None:
    door = FrontDoor(wait_s=5.0)
    seen: list[str] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        seen.append(scope["path"])
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    pending = asyncio.create_task(_call(door, _http("/api/status")))
    await asyncio.sleep(0.05)
    assert not pending.done() and seen == []  # held, not refused
    door.install(app)
    sent = await asyncio.wait_for(pending, 5.0)
    assert sent[0]["status"] == 204 and seen == ["/api/status"]
    # Installed: /health is the app's now, not "starting".
    await _call(door, _http("/health"))
    assert seen == ["/api/status", "/health"]


async def test_a_request_that_waits_too_long_gets_503_and_a_websocket_1013() -> None:
    door = FrontDoor(wait_s=0.05)
    status, body, headers = _status_and_body(await _call(door, _http("/api/status")))
    assert status == 503 and "still starting" in body["error"]
    assert headers[b"retry-after"] == b"2"
    sent = await _call(door, {"type": "websocket", "path": "/ws/chat", "headers": []})
    assert sent == [{"type": "websocket.close", "code": 1013}]


# --- in the service --------------------------------------------------------------------------

CONFIG = """
[provider]
name = "ollama"
model = "qwen2.5:3b"
base_url = "http://127.0.0.1:9"
[gateway]
enabled = true
port = {port}
require_pairing = false
requests_per_minute = 0
[hardware]
board = "sim"
[[devices]]
name = "lamp"
pin = "GPIO17"
kind = "led"
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _service(home: Path, port: int) -> Service:
    path = home / "config.toml"
    path.write_text(CONFIG.format(port=port), encoding="utf-8")
    options = ServiceOptions(
        sim=True,
        assemble={"provider": ScriptedProvider()},
        say=lambda line: None,
        control_socket=False,
    )
    return Service(load_config(path), options)


async def test_the_door_opens_before_the_runtime_and_holds_requests_until_it_is_up(
    clawseed_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import clawseed_edge.config.assembly as assembly

    release = asyncio.Event()
    real_assemble = assembly.assemble

    async def slow_assemble(*args: Any, **kwargs: Any) -> Any:
        await release.wait()  # the runtime is "still starting" until the test says so
        return await real_assemble(*args, **kwargs)

    monkeypatch.setattr(assembly, "assemble", slow_assemble)
    port = _free_port()
    service = _service(clawseed_home, port)
    starting = asyncio.create_task(service.start())
    base = f"http://127.0.0.1:{port}"
    try:
        async with httpx.AsyncClient(base_url=base, timeout=10.0) as client:
            for _ in range(200):  # the door opens early in start(): bounded wait for it
                try:
                    health = await client.get("/health")
                    break
                except httpx.ConnectError:
                    await asyncio.sleep(0.02)
            else:
                pytest.fail("the door never opened")
            assert health.json()["status"] == "starting"
            assert (await client.get("/ready")).status_code == 503
            held = asyncio.create_task(client.get("/api/peripherals"))
            await asyncio.sleep(0.1)
            assert not held.done()  # waits for the gateway, not refused
            release.set()
            await asyncio.wait_for(starting, 30.0)
            answer = await asyncio.wait_for(held, 10.0)
            assert answer.status_code == 200, answer.text
            assert "lamp" in answer.text  # the gateway's own answer, the runtime behind it
            assert (await client.get("/health")).json()["status"] == "ok"
    finally:
        release.set()
        if not starting.done():
            starting.cancel()
        await asyncio.gather(starting, return_exceptions=True)
        await service.aclose()


async def test_a_busy_port_fails_before_any_hardware_is_set_up(
    clawseed_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import clawseed_edge.config.assembly as assembly

    called: list[bool] = []

    async def must_not_run(*args: Any, **kwargs: Any) -> Any:
        called.append(True)
        raise AssertionError("assemble ran although the port was busy")

    monkeypatch.setattr(assembly, "assemble", must_not_run)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        service = _service(clawseed_home, taken.getsockname()[1])
        try:
            with pytest.raises(GatewayBindFailed, match="cannot listen"):
                await service.start()
        finally:
            await service.aclose()
    assert called == []


async def test_a_stop_while_starting_ends_the_start_up_before_any_hardware(
    clawseed_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Ctrl-C while the service starts: the safe state at once, and no output is then set up
    # at its initial level by the rest of the start-up (service/serve.py).
    import clawseed_edge.config.assembly as assembly
    from clawseed_edge.service.serve import serve

    entered = asyncio.Event()
    finished: list[bool] = []
    real_assemble = assembly.assemble

    async def slow_assemble(*args: Any, **kwargs: Any) -> Any:
        entered.set()
        await asyncio.sleep(30)  # the hardware "still connecting" when the stop comes
        finished.append(True)
        return await real_assemble(*args, **kwargs)

    monkeypatch.setattr(assembly, "assemble", slow_assemble)
    port = _free_port()
    service = _service(clawseed_home, port)
    serving = asyncio.create_task(serve(service))
    await asyncio.wait_for(entered.wait(), 30.0)
    service.stop()  # what the signal handler does once the safe state is applied
    await asyncio.wait_for(serving, 10.0)
    assert finished == [] and service.runtime is None
    with socket.socket() as again:  # the door was closed with the rest
        again.bind(("127.0.0.1", port))

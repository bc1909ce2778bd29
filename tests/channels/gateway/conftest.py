"""A running service with the gateway on 127.0.0.1 (an ephemeral port), for real-socket tests."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import ClientConnection, connect

from clawseed_edge.service import Service
from clawseed_edge.testing import ScriptedProvider
from clawseed_edge.testing.gateway import running_gateway

CONFIG = """
[provider]
name = "demo"
[autonomy]
level = "supervised"
approval_timeout_s = 20
[gateway]
enabled = true
port = 0
max_body_bytes = 4096
max_frame_bytes = 4096
max_message_chars = 500
[hardware]
board = "sim"
[[devices]]
name = "porch_light"
pin = "GPIO17"
kind = "led"
[[devices]]
name = "doorbell"
pin = "GPIO22"
kind = "button"
on_press = "the doorbell button was pressed"
"""


@contextlib.asynccontextmanager
async def running_service(
    home: Path, provider: Any, config: str = CONFIG, **options: Any
) -> AsyncIterator[Service]:
    # The control socket is on here (tests/service use it); one service per home.
    async with running_gateway(home, provider, config, control_socket=True, **options) as gw:
        yield gw.service


def base_url(service: Service) -> str:
    assert service.server is not None
    return service.server.url


def ws_url(service: Service, query: str = "") -> str:
    return (
        base_url(service).replace("http://", "ws://") + "/ws/chat" + (f"?{query}" if query else "")
    )


async def pair_token(service: Service, name: str = "test-phone") -> str:
    assert service.hub is not None
    code = service.hub.pairing.new_code()
    async with httpx.AsyncClient(base_url=base_url(service)) as http:
        response = await http.post("/pair", headers={"X-Pairing-Code": code, "X-Client-Name": name})
    assert response.status_code == 200, response.text
    return str(response.json()["token"])


async def open_ws(service: Service, token: str, query: str = "") -> ClientConnection:
    return await connect(
        ws_url(service, query), additional_headers={"Authorization": f"Bearer {token}"}
    )


async def recv(ws: ClientConnection) -> dict[str, Any]:
    return dict(json.loads(await ws.recv()))


async def recv_until(ws: ClientConnection, kind: str) -> list[dict[str, Any]]:
    """Frames up to and including the first of type ``kind``."""
    frames = []
    while True:
        frame = await recv(ws)
        frames.append(frame)
        if frame["type"] == kind:
            return frames


@pytest.fixture
def provider() -> ScriptedProvider:
    return ScriptedProvider(streaming=True)

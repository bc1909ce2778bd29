"""What the gateway's WebSocket layer (uvicorn on wsproto) guarantees on the wire: close codes a
client acts on, the frame size limit, and keepalive pings that find a phone that went away."""

from __future__ import annotations

import asyncio
import json
import struct
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette
from starlette.routing import WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.typing import Origin

from clawseed_edge.channels.gateway.server import GatewayServer
from clawseed_edge.testing import ScriptedProvider

from .conftest import base_url, open_ws, pair_token, recv, running_service

WAIT_S = 20.0  # every wait below is bounded by this; none of them asserts a duration


async def _close_code(ws: object) -> int | None:
    """Read until the socket closes; the close code the server sent."""
    try:
        while True:
            await ws.recv()  # type: ignore[attr-defined]
    except ConnectionClosed as closed:
        return closed.rcvd.code if closed.rcvd else None


@pytest.mark.parametrize(
    ("token", "query", "code", "close_code"),
    [
        # app.js does not reconnect after 1008: the token is wrong, retrying cannot help.
        ("cst_not-a-real-token", "", "unauthorized", 1008),
        (None, "session_id=not%20valid", "session_id_invalid", 1013),
    ],
)
async def test_a_refused_socket_reads_why_and_then_the_close_code(
    clawseed_home: Path,
    provider: ScriptedProvider,
    token: str | None,
    query: str,
    code: str,
    close_code: int,
) -> None:
    async with running_service(clawseed_home, provider) as service:
        ws = await open_ws(service, token or await pair_token(service), query)
        async with asyncio.timeout(WAIT_S):
            frame = await recv(ws)
            closed_with = await _close_code(ws)
    assert frame["type"] == "error" and frame["code"] == code
    assert closed_with == close_code


async def test_a_frame_over_the_socket_limit_closes_with_1009_and_the_gateway_keeps_serving(
    clawseed_home: Path, provider: ScriptedProvider
) -> None:
    provider.add("still serving")
    async with running_service(clawseed_home, provider) as service:
        assert service.server is not None
        limit = service.server.ws_max_size  # above [gateway] max_frame_bytes: a hard limit
        token = await pair_token(service)
        async with asyncio.timeout(WAIT_S):
            ws = await open_ws(service, token)
            while (await recv(ws))["type"] != "connected":
                pass
            await ws.send("x" * (limit + 1))
            closed_with = await _close_code(ws)
            async with await open_ws(service, token) as again:
                while (await recv(again))["type"] != "connected":
                    pass
                await again.send(json.dumps({"type": "message", "content": "hi"}))
                while (frame := await recv(again))["type"] != "done":
                    pass
            async with httpx.AsyncClient(base_url=base_url(service)) as http:
                health = await http.get("/health")
    assert closed_with == 1009
    assert frame["full_response"] == "still serving"
    assert health.status_code == 200


async def test_a_socket_from_another_web_page_is_refused_at_the_upgrade(
    clawseed_home: Path, provider: ScriptedProvider
) -> None:
    async with running_service(clawseed_home, provider) as service:
        token = await pair_token(service)
        url = base_url(service).replace("http://", "ws://") + "/ws/chat"
        auth = {"Authorization": f"Bearer {token}"}
        async with asyncio.timeout(WAIT_S):
            with pytest.raises(InvalidStatus) as refused:
                await connect(url, origin=Origin("http://evil.test"), additional_headers=auth)
            own_origin = Origin(base_url(service))
            async with connect(url, origin=own_origin, additional_headers=auth) as own:
                while (await recv(own))["type"] != "connected":
                    pass
    assert refused.value.response.status_code == 403


# --- keepalive -----------------------------------------------------------------------------


async def _echo(websocket: WebSocket) -> None:
    await websocket.accept()
    try:
        while True:
            await websocket.send_text(await websocket.receive_text())
    except WebSocketDisconnect:
        pass


async def _read_frame(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    """One unmasked frame from the server: (opcode, payload)."""
    head = await reader.readexactly(2)
    length = head[1] & 0x7F
    if length == 126:
        (length,) = struct.unpack("!H", await reader.readexactly(2))
    elif length == 127:
        (length,) = struct.unpack("!Q", await reader.readexactly(8))
    return head[0] & 0x0F, await reader.readexactly(length)


async def _silent_phone(port: int) -> tuple[list[int], int | None]:
    """A client that completes the handshake and then never answers: the opcodes it was sent
    and the close code, read until the server closes the connection."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(
            b"GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
            b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            b"Sec-WebSocket-Version: 13\r\n\r\n"
        )
        response = await reader.readuntil(b"\r\n\r\n")
        assert response.startswith(b"HTTP/1.1 101"), response
        opcodes: list[int] = []
        while True:
            try:
                opcode, payload = await _read_frame(reader)
            except asyncio.IncompleteReadError:
                return opcodes, None
            opcodes.append(opcode)
            if opcode == 0x8:  # close
                return opcodes, struct.unpack("!H", payload[:2])[0] if payload else None
    finally:
        writer.close()


async def test_keepalive_pings_close_a_silent_phone_with_1011_and_keep_a_live_one() -> None:
    app = Starlette(routes=[WebSocketRoute("/ws", _echo)])
    server = GatewayServer(app, port=0, ws_ping_interval_s=0.1, ws_ping_timeout_s=0.3)
    await server.start()
    try:
        async with asyncio.timeout(WAIT_S):
            # The live client answers the server's pings (the library does); it sends none.
            async with connect(f"ws://127.0.0.1:{server.port}/ws", ping_interval=None) as live:
                opcodes, code = await _silent_phone(server.port)
                await live.send("still there?")
                echoed = await live.recv()
    finally:
        await server.aclose()
    assert opcodes[0] == 0x9, "the server pinged"
    assert code == 1011, "and closed the connection whose pong never came"
    assert echoed == "still there?"
    assert server.admission.open_count() == 0

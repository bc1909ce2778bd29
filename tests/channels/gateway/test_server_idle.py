"""The embedded uvicorn server sleeps while idle: no tick timer, a date header made on demand."""

from __future__ import annotations

import asyncio
from email.utils import formatdate
from types import SimpleNamespace

import httpx
import pytest
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from clawseed_edge.channels.gateway import server as server_module
from clawseed_edge.channels.gateway.server import GatewayServer

T0 = 1_790_000_000.0


def _app() -> Starlette:
    return Starlette(routes=[Route("/health", lambda _: PlainTextResponse("ok"))])


def _timers() -> set[asyncio.TimerHandle]:
    loop = asyncio.get_running_loop()
    return {h for h in loop._scheduled if not h.cancelled()}  # type: ignore[attr-defined]


async def test_an_idle_server_has_no_timer_and_stops_on_request() -> None:
    server = GatewayServer(_app(), port=0)
    before = _timers()
    await server.start()
    for _ in range(5):  # let the server task reach its wait
        await asyncio.sleep(0)
    # uvicorn's own main loop would sleep 0.1 s here, for ever: a timer 10 times a second.
    assert _timers() - before == set()
    async with httpx.AsyncClient() as client:
        assert (await client.get(f"{server.url}/health")).text == "ok"
    await asyncio.wait_for(server.aclose(), 10)
    assert server.state.value == "closed"


async def test_the_date_header_follows_the_clock_of_each_response(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    now = [T0]
    monkeypatch.setattr(server_module, "time", SimpleNamespace(time=lambda: now[0]))
    server = GatewayServer(_app(), port=0)
    await server.start()
    try:
        async with httpx.AsyncClient() as client:
            first = await client.get(f"{server.url}/health")
            now[0] = T0 + 61.5  # a minute later, on the same connection
            second = await client.get(f"{server.url}/health")
        assert first.headers["date"] == formatdate(T0, usegmt=True)
        assert second.headers["date"] == formatdate(T0 + 61, usegmt=True)
        assert first.headers["server"] == "uvicorn"  # uvicorn's other default headers stay
    finally:
        await server.aclose()

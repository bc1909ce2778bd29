"""Shutdown with a client mid-turn, and a session taken over by a second socket."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from websockets.exceptions import ConnectionClosed

from clawseed_edge.api import ChatRequest, ChatResponse
from clawseed_edge.testing import ScriptedProvider

from .conftest import open_ws, pair_token, recv, recv_until, running_service


class AskedProvider(ScriptedProvider):
    """Sets ``asked`` when a request arrives."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.asked = asyncio.Event()

    async def chat(self, request: ChatRequest) -> ChatResponse:
        self.asked.set()
        return await super().chat(request)


async def test_stopping_the_service_aborts_a_running_turn_and_tells_the_client(
    clawseed_home: Path,
) -> None:
    slow = AskedProvider(["never shown"], delay_s=60.0)
    frames: list[dict[str, object]] = []
    async with running_service(clawseed_home, slow) as service:
        token = await pair_token(service)
        ws = await open_ws(service, token)
        await recv_until(ws, "connected")
        await ws.send(json.dumps({"type": "message", "content": "take your time"}))
        await slow.asked.wait()  # the turn is waiting for the model
        await service.aclose()  # what SIGTERM does after the safe state
        try:
            while True:
                frames.append(await recv(ws))
        except ConnectionClosed as closed:
            code = closed.rcvd.code if closed.rcvd else None
    assert {"type": "error", "code": "closing", "message": "the service is stopping"} in frames
    assert code == 1001
    assert service.hub is not None and not service.hub.connections


async def test_a_second_socket_on_the_same_session_takes_it_over(
    clawseed_home: Path, provider: ScriptedProvider
) -> None:
    provider.add("Hello again.")
    async with running_service(clawseed_home, provider) as service:
        token = await pair_token(service)
        async with await open_ws(service, token, "session_id=phone-1") as old:
            await recv_until(old, "connected")
            async with await open_ws(service, token, "session_id=phone-1") as new:
                start = await recv(new)
                await recv(new)
                kicked = await recv(old)
                await new.send(json.dumps({"type": "message", "content": "hi"}))
                done = await recv_until(new, "done")
    assert start["sessionId"] == "phone-1"
    assert kicked["code"] == "closing" and "another connection" in kicked["message"]
    assert done[-1]["full_response"] == "Hello again."

"""A client written only from the protocol table in docs/gateway.md (raw websockets + httpx,
not our SDK), as a ClawSeed Android app would be: pairing, remote tools, a second session with
the same tools, an approval it cannot answer, and a resume after a dropped socket."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
from websockets.asyncio.client import ClientConnection, connect

from clawseed_edge.testing import ScriptedProvider

from .conftest import base_url, running_service, ws_url

TOOLS = [
    {"name": "device_info", "description": "the phone's model", "parameters": "{}"},
    {"name": "bad name", "description": "an invalid tool name"},
]


async def frames_until(ws: ClientConnection, kind: str) -> list[dict[str, Any]]:
    frames = []
    async with asyncio.timeout(20):
        while True:
            frame = json.loads(await ws.recv())
            frames.append(frame)
            if frame["type"] == kind:
                return frames


async def open_session(url: str, token: str, session: str) -> ClientConnection:
    # The Android spelling ?sessionId=, and no approval declaration at all.
    return await connect(
        f"{url}?sessionId={session}", additional_headers={"Authorization": f"Bearer {token}"}
    )


async def test_a_client_written_from_the_protocol_table(clawseed_home: Path) -> None:
    provider = ScriptedProvider(streaming=True)
    provider.add(
        ScriptedProvider.call("device_info"),
        ScriptedProvider.call("gpio_switch", device="porch_light", on=True),
        "It is a Pixel 8; the light needs an approval.",
        ScriptedProvider.call("device_info"),
        "Your phone did not answer.",
    )
    async with running_service(clawseed_home, provider) as service:
        assert service.hub is not None
        code = service.hub.pairing.new_code()  # what `clawseed-edge pair` prints
        async with httpx.AsyncClient(base_url=base_url(service)) as http:
            paired = await http.post(
                "/pair", headers={"X-Pairing-Code": code, "X-Client-Name": "android"}
            )
        token = paired.json()["token"]
        url = ws_url(service)

        # Session one: remote tools (one of them bad), then a turn that calls one of them and
        # an act that needs an approval this client never said it can answer.
        async with await open_session(url, token, "droid-1") as one:
            start = await frames_until(one, "connected")
            await one.send(json.dumps({"type": "register_tools", "tools": TOOLS}))
            registered_one = (await frames_until(one, "tools_registered"))[-1]

            # Session two, the same app on a second phone: the same tool names register.
            async with await open_session(url, token, "droid-2") as two:
                await frames_until(two, "connected")
                await two.send(json.dumps({"type": "register_tools", "tools": TOOLS[:1]}))
                registered_two = (await frames_until(two, "tools_registered"))[-1]

            await one.send(json.dumps({"type": "message", "content": "what phone is this?"}))
            turn = await frames_until(one, "tool_call_request")
            request = turn[-1]
            await one.send(
                json.dumps(
                    {"type": "tool_result", "id": request["id"], "output": {"model": "Pixel 8"}}
                )
            )
            turn += await frames_until(one, "done")

        # Session three: the socket drops while the phone's tool is asked; the turn goes on
        # and its answer is delivered when the session resumes.
        async with await open_session(url, token, "droid-3") as three:
            await frames_until(three, "connected")
            await three.send(json.dumps({"type": "register_tools", "tools": TOOLS[:1]}))
            await frames_until(three, "tools_registered")
            await three.send(json.dumps({"type": "message", "content": "and now?"}))
            await frames_until(three, "tool_call_request")
        async with await open_session(url, token, "droid-3") as resumed:
            after = await frames_until(resumed, "done")

    assert start[0]["type"] == "session_start" and start[0]["sessionId"] == "droid-1"
    assert registered_one["registered"] == ["device_info"]
    assert [r["name"] for r in registered_one["rejected"]] == ["bad name"]
    assert registered_two["registered"] == ["device_info"] and registered_two["count"] == 1

    calls = [f for f in turn if f["type"] == "tool_call"]
    results = [f for f in turn if f["type"] == "tool_result"]
    # Ids unique in the turn, each result with its call's id, the request with its call's.
    assert len({c["id"] for c in calls}) == len(calls) == 2
    assert [r["id"] for r in results] == [c["id"] for c in calls]
    assert request["id"] == calls[0]["id"] and request["name"] == "device_info"
    assert json.loads(results[0]["output"]) == {"model": "Pixel 8"}
    # Not waited for: refused at once, since nobody who answers approvals is connected.
    assert results[1]["success"] is False and "approve" in results[1]["error"]
    assert turn[-1]["full_response"] == "It is a Pixel 8; the light needs an approval."

    assert after[0]["type"] == "session_start" and after[0]["resumed"] is True
    assert after[-1] == {"type": "done", "full_response": "Your phone did not answer."}
    assert provider.requests[-1].messages[-1].role == "tool"

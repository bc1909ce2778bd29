"""A resumed session: its title without the engine's time stamp, and one message count in
session_start, /api/sessions and /api/sessions/{id}."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from clawseed_edge.testing import ScriptedProvider

from .conftest import base_url, open_ws, pair_token, recv_until, running_service


async def test_a_resumed_session_has_a_clean_title_and_one_message_count(
    clawseed_home: Path, provider: ScriptedProvider
) -> None:
    # A turn with a tool call stores more messages (the call, its result) than a person sees.
    provider.add(
        ScriptedProvider.call("gpio_switch", device="porch_light", on=True), "Tried.", "Fine."
    )
    async with running_service(clawseed_home, provider) as service:
        token = await pair_token(service)
        async with await open_ws(service, token, "session_id=kitchen") as ws:
            await recv_until(ws, "connected")
            for text in ("turn on the porch light", "thanks"):
                await ws.send(json.dumps({"type": "message", "content": text}))
                await recv_until(ws, "done")
        async with await open_ws(service, token, "sessionId=kitchen") as ws:
            start = (await recv_until(ws, "connected"))[0]
        headers = {"Authorization": f"Bearer {token}"}
        async with httpx.AsyncClient(base_url=base_url(service), headers=headers) as http:
            listed = (await http.get("/api/sessions")).json()["sessions"]
            messages = (await http.get("/api/sessions/kitchen")).json()["messages"]
    (entry,) = [s for s in listed if s["session_id"] == "kitchen"]
    assert start["resumed"] is True
    assert start["name"] == entry["title"] == "turn on the porch light"
    assert start["messageCount"] == entry["message_count"] == len(messages) == 4
    # The answer carries its turn's tool call, so a reloaded app draws its tool card again.
    (tool,) = messages[1]["tools"]
    assert tool["name"] == "gpio_switch" and tool["arguments"] == {
        "device": "porch_light",
        "on": True,
    }
    assert tool["success"] is False and tool["error"]
    assert "tools" not in messages[3]

"""SSE receives approvals and can answer them over HTTP; regenerate re-asks the last message."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from clawseed_edge.testing import ScriptedProvider
from clawseed_edge.testing.hardware import mock_pin, pin_level

from .conftest import base_url, open_ws, pair_token, recv, recv_until, running_service
from .test_approvals import SignallingProvider


async def _next_sse_event(lines: Any) -> dict[str, Any]:
    async for line in lines:
        if line.startswith("data: "):
            return dict(json.loads(line[6:]))
    raise AssertionError("the stream ended")


async def test_an_sse_listener_gets_the_approval_and_answers_it_over_http(
    clawseed_home: Path,
) -> None:
    provider = SignallingProvider(
        [ScriptedProvider.call("gpio_switch", device="porch_light", on=True), "Done."]
    )
    async with running_service(clawseed_home, provider) as service:
        assert service.runtime is not None and service.hub is not None
        (gpio,) = service.runtime.peripherals
        token = await pair_token(service)
        headers = {"Authorization": f"Bearer {token}"}
        async with httpx.AsyncClient(base_url=base_url(service), headers=headers) as http:
            async with http.stream("GET", "/sse?approvals=1") as stream:
                lines = stream.aiter_lines()
                assert (await anext(lines)).startswith(": connected")
                mock_pin(gpio, "doorbell").drive_low()
                request = await _next_sse_event(lines)
                answer = await http.post(f"/api/approvals/{request['id']}", json={"approved": True})
                resolved = await _next_sse_event(lines)
                await provider.answered.wait()  # the approved call has run
                level = pin_level(gpio, "porch_light")
                unknown = await http.post("/api/approvals/nope", json={"approved": True})
    assert request["type"] == "approval_request" and request["device"] == "porch_light"
    assert answer.json() == {"ok": True}
    assert resolved == {"type": "approval_resolved", "id": request["id"], "outcome": "approved"}
    assert unknown.status_code == 404
    assert level == 1


async def test_regenerate_resets_the_stream_and_asks_the_same_message_again(
    clawseed_home: Path, provider: ScriptedProvider
) -> None:
    provider.add("First try.", "Second try.")
    async with running_service(clawseed_home, provider) as service:
        token = await pair_token(service)
        async with await open_ws(service, token) as ws:
            await recv_until(ws, "connected")
            await ws.send(json.dumps({"type": "regenerate"}))
            nothing = await recv(ws)
            await ws.send(json.dumps({"type": "message", "content": "a poem please"}))
            await recv_until(ws, "done")
            await ws.send(json.dumps({"type": "regenerate"}))
            frames = await recv_until(ws, "done")
    assert nothing["code"] == "nothing_to_regenerate"
    assert frames[0] == {"type": "chunk_reset"}
    assert frames[-1]["full_response"] == "Second try."
    assert provider.requests[1].messages[-1].content.endswith("a poem please")
    # The old answer left the history: the model sees the question once and no first try.
    regenerated = provider.requests[1].messages
    assert [m.content for m in regenerated if m.role == "assistant"] == []
    assert sum(m.role == "user" and "a poem please" in m.content for m in regenerated) == 1

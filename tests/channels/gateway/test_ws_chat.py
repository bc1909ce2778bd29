"""``/ws/chat`` over a real socket: streaming, malformed frames, resume, busy turns, abort."""

from __future__ import annotations

import json
from pathlib import Path

from clawseed_edge.testing import ScriptedProvider

from .conftest import open_ws, pair_token, recv, recv_until, running_service


async def test_a_turn_streams_chunks_then_done(
    clawseed_home: Path, provider: ScriptedProvider
) -> None:
    provider.add("Hello from the porch.")
    async with running_service(clawseed_home, provider) as service:
        token = await pair_token(service)
        async with await open_ws(service, token) as ws:
            start = await recv(ws)
            connected = await recv(ws)
            await ws.send(json.dumps({"type": "message", "content": "hi"}))
            frames = await recv_until(ws, "done")
    assert start["type"] == "session_start"
    assert set(start) >= {"sessionId", "name", "resumed", "messageCount"}
    assert start["resumed"] is False and start["messageCount"] == 0
    assert connected["type"] == "connected"
    chunks = [f["content"] for f in frames if f["type"] == "chunk"]
    assert len(chunks) > 1, "streamed in pieces"
    assert "".join(chunks) == "Hello from the porch."
    assert frames[-1] == {"type": "done", "full_response": "Hello from the porch."}


async def test_malformed_and_unknown_frames_get_errors_and_the_connection_keeps_serving(
    clawseed_home: Path, provider: ScriptedProvider
) -> None:
    provider.add("still here")
    async with running_service(clawseed_home, provider) as service:
        token = await pair_token(service)
        async with await open_ws(service, token) as ws:
            await recv_until(ws, "connected")
            bad = [
                "not json at all",
                json.dumps([1, 2, 3]),
                json.dumps({"type": "launch_rockets"}),
                json.dumps({"type": "message"}),
                json.dumps({"type": "message", "content": "x" * 501}),
                "[" * 40 + "]" * 40,
                json.dumps({"type": "message", "content": "y" * 5000}),  # over max_frame_bytes
                json.dumps({"type": "tool_result", "id": "nope", "output": "1"}),
                json.dumps({"type": "approval_response", "id": "nope", "approved": True}),
            ]
            errors = []
            for raw in bad:
                await ws.send(raw)
                errors.append(await recv(ws))
            await ws.send(json.dumps({"type": "message", "content": "are you there?"}))
            frames = await recv_until(ws, "done")
    codes = [e["code"] for e in errors]
    assert all(e["type"] == "error" for e in errors)
    assert codes == [
        "json_invalid",
        "frame_invalid",
        "frame_unknown",
        "frame_invalid",
        "too_large",
        "json_too_deep",
        "too_large",
        "tool_result_unexpected",
        "approval_unknown",
    ]
    assert "launch_rockets" in errors[2]["message"] and "message" in errors[2]["message"]
    assert frames[-1]["full_response"] == "still here"


async def test_a_reconnect_with_session_id_resumes_the_conversation(
    clawseed_home: Path, provider: ScriptedProvider
) -> None:
    provider.add("First answer.", "Second answer.")
    async with running_service(clawseed_home, provider) as service:
        token = await pair_token(service)
        async with await open_ws(service, token) as ws:
            session = (await recv(ws))["sessionId"]
            await ws.send(json.dumps({"type": "message", "content": "remember 42"}))
            await recv_until(ws, "done")
        async with await open_ws(service, token, f"session_id={session}") as ws:
            start = await recv(ws)
            await ws.send(json.dumps({"type": "message", "content": "what did I say?"}))
            await recv_until(ws, "done")
    assert start["sessionId"] == session
    assert start["resumed"] is True and start["messageCount"] == 2
    second = provider.requests[-1].messages
    assert any("remember 42" in m.content for m in second if m.role == "user")
    assert any(m.content == "First answer." for m in second if m.role == "assistant")


async def test_a_second_message_during_a_turn_is_refused_and_abort_stops_the_turn(
    clawseed_home: Path,
) -> None:
    slow = ScriptedProvider(["never shown"], delay_s=30.0)
    async with running_service(clawseed_home, slow) as service:
        token = await pair_token(service)
        async with await open_ws(service, token) as ws:
            await recv_until(ws, "connected")
            await ws.send(json.dumps({"type": "message", "content": "slow one"}))
            await ws.send(json.dumps({"type": "message", "content": "impatient"}))
            busy = await recv(ws)
            await ws.send(json.dumps({"type": "abort"}))
            aborted = await recv_until(ws, "aborted")
    assert busy["code"] == "turn_busy"
    assert aborted[-1]["reason"] == "aborted by the client"


async def test_a_bad_token_is_told_why_on_the_socket(
    clawseed_home: Path, provider: ScriptedProvider
) -> None:
    async with running_service(clawseed_home, provider) as service:
        async with await open_ws(service, "cst_not-a-real-token") as ws:
            frame = await recv(ws)
    assert frame["type"] == "error" and frame["code"] == "unauthorized"
    assert "pair" in frame["message"]


async def test_chat_sockets_decline_permessage_deflate(
    clawseed_home: Path, provider: ScriptedProvider
) -> None:
    provider.add("small frames")
    async with running_service(clawseed_home, provider) as service:
        token = await pair_token(service)
        async with await open_ws(service, token) as ws:  # the client offers deflate
            await recv_until(ws, "connected")
            await ws.send(json.dumps({"type": "message", "content": "hi"}))
            frames = await recv_until(ws, "done")
            assert ws.response is not None
            extensions = ws.response.headers.get("Sec-WebSocket-Extensions")
    assert extensions is None, "no per-connection zlib state (~34 KB) for small chat frames"
    assert frames[-1]["full_response"] == "small frames"

"""The pure parts: client frames, turn-event frames, limits, idempotency. No sockets."""

from __future__ import annotations

import asyncio
import json

import pytest

from clawseed_edge.api import (
    AbortedEvent,
    ChunkEvent,
    DoneEvent,
    ToolCall,
    ToolCallEvent,
    ToolResult,
    ToolResultEvent,
)
from clawseed_edge.channels.gateway.errors import ClientError
from clawseed_edge.channels.gateway.idempotency import IdempotencyCache
from clawseed_edge.channels.gateway.limits import RateLimiter, loads_bounded
from clawseed_edge.channels.gateway.protocol import (
    FrameLimits,
    MessageFrame,
    RegisterToolsFrame,
    ToolResultFrame,
    parse_client_frame,
    turn_event_frame,
)

LIMITS = FrameLimits()


def parse(frame: object) -> object:
    return parse_client_frame(json.dumps(frame), LIMITS)


def test_the_android_sdks_frames_parse() -> None:
    assert parse({"type": "message", "content": "你好"}) == MessageFrame("你好")
    tools = parse(
        {
            "type": "register_tools",
            "tools": [
                {
                    "name": "device_info",
                    "description": "phone info",
                    "parameters": '{"type":"object","properties":{},"required":[]}',
                }
            ],
        }
    )
    assert isinstance(tools, RegisterToolsFrame)
    assert tools.tools[0].parameters["type"] == "object" and tools.tools[0].risk == "act"
    assert parse({"type": "tool_result", "id": "tc1", "output": "ok", "success": True}) == (
        ToolResultFrame("tc1", True, "ok", "")
    )
    assert parse({"type": "tool_error", "id": "tc1", "error": "no camera", "success": False}) == (
        ToolResultFrame("tc1", False, "", "no camera")
    )


@pytest.mark.parametrize(
    ("frame", "code"),
    [
        ({"type": "tool_result", "id": "bad id!", "output": "x"}, "frame_invalid"),
        ({"type": "approval_response", "id": "a1", "approved": "yes"}, "frame_invalid"),
        ({"kind": "message"}, "frame_unknown"),
    ],
)
def test_bad_frames_are_refused_with_a_code_that_names_the_problem(
    frame: object, code: str
) -> None:
    with pytest.raises(ClientError) as refused:
        parse(frame)
    assert refused.value.code == code


@pytest.mark.parametrize(
    ("bad", "code"),
    [
        ({"name": "bad name"}, "tool_name_invalid"),
        ({"name": "ok"}, "frame_invalid"),  # named twice
        ({"name": "a", "risk": "nuke"}, "frame_invalid"),
        ({"name": "a", "parameters": {"description": "x" * 9000}}, "too_large"),
    ],
)
def test_one_bad_tool_rejects_only_itself(bad: dict[str, object], code: str) -> None:
    frame = parse({"type": "register_tools", "tools": [{"name": "ok"}, bad, {"name": "cam"}]})
    assert isinstance(frame, RegisterToolsFrame)
    assert [t.name for t in frame.tools] == ["ok", "cam"]
    (rejected,) = frame.rejected
    assert rejected["code"] == code and rejected["name"] == str(bad["name"])


def test_a_tool_output_that_is_an_object_is_json_encoded_and_bounded() -> None:
    frame = parse({"type": "tool_result", "id": "tc1", "output": {"lat": 1.5, "ok": True}})
    assert frame == ToolResultFrame("tc1", True, '{"lat": 1.5, "ok": true}', "")
    with pytest.raises(ClientError) as refused:
        parse_client_frame(
            json.dumps({"type": "tool_result", "id": "tc1", "output": ["x" * 900] * 5}),
            FrameLimits(max_output_chars=1000),
        )
    assert refused.value.code == "too_large"


def test_what_is_echoed_back_of_client_input_is_short() -> None:
    with pytest.raises(ClientError) as refused:
        parse({"type": "x" * 5000})
    assert len(str(refused.value)) < 300


def test_turn_events_become_the_android_frames() -> None:
    call = ToolCall("gpio_switch", {"device": "led", "on": True}, id="c1")
    assert turn_event_frame(ChunkEvent("Hi")) == {"type": "chunk", "content": "Hi"}
    assert turn_event_frame(DoneEvent("Hi there")) == {"type": "done", "full_response": "Hi there"}
    assert turn_event_frame(ToolCallEvent(call))["arguments"] == {"device": "led", "on": True}
    result = turn_event_frame(ToolResultEvent(call, ToolResult.ok("x" * 10000)))
    assert result is not None and len(result["output"]) <= 4000
    assert turn_event_frame(AbortedEvent("stop")) == {"type": "aborted", "reason": "stop"}


def test_json_depth_is_bounded_without_recursion() -> None:
    assert loads_bounded("[[[1]]]", max_bytes=100) == [[[1]]]
    with pytest.raises(ClientError, match="deeper than 32"):
        loads_bounded("[" * 5000 + "]" * 5000, max_bytes=100_000)


def test_the_rate_limit_is_a_sliding_minute() -> None:
    now = [0.0]
    limiter = RateLimiter(2, clock=lambda: now[0])
    limiter.hit("t")
    limiter.hit("t")
    with pytest.raises(ClientError) as limited:
        limiter.hit("t")
    assert limited.value.status == 429 and limited.value.headers["Retry-After"] == "61"
    limiter.hit("other")  # per key
    now[0] = 60.0
    limiter.hit("t")


async def test_concurrent_duplicates_share_one_answer_and_failures_are_not_kept() -> None:
    cache = IdempotencyCache(300.0)
    started = asyncio.Event()
    release = asyncio.Event()
    runs = 0

    async def work() -> str:
        nonlocal runs
        runs += 1
        started.set()
        await release.wait()
        return "answer"

    first = asyncio.create_task(cache.run("k", work))
    await started.wait()
    second = asyncio.create_task(cache.run("k", work))
    release.set()
    assert await first == ("answer", False)
    assert await second == ("answer", True)
    assert runs == 1

    async def broken() -> str:
        raise ValueError("model down")

    with pytest.raises(ValueError):
        await cache.run("k2", broken)
    assert await cache.run("k2", work) == ("answer", False), "a failure may be retried"

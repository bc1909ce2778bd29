"""ScriptedProvider: replay, recording, capabilities, streaming, exhaustion."""

from __future__ import annotations

import json

import pytest

from clawseed_edge.api import (
    ChatMessage,
    ChatRequest,
    ChatResponse,
    Provider,
    ProviderError,
    ProviderTimeout,
    StreamDone,
    TextDelta,
    ThinkingDelta,
    ToolCall,
    ToolCallReady,
    Usage,
)
from clawseed_edge.testing import ScriptedProvider, ScriptExhausted

REQ = ChatRequest((ChatMessage.user("hi"),))


async def test_it_is_a_provider_and_replays_in_order() -> None:
    p = ScriptedProvider(["one", ScriptedProvider.text("two")])
    assert isinstance(p, Provider)
    assert (await p.chat(REQ)).text == "one"
    assert (await p.chat(REQ)).text == "two"
    assert p.requests == [REQ, REQ] and p.consumed == 2 and p.remaining == 0


async def test_native_calls_get_ids_usage_and_names() -> None:
    p = ScriptedProvider(
        [
            ScriptedProvider.call("led", state="on"),
            ToolCall("a"),
            [ToolCall("b"), ToolCall("c", {}, "mine")],
        ]
    )
    r1, r2, r3 = [await p.chat(REQ) for _ in range(3)]
    assert r1.tool_calls == (ToolCall("led", {"state": "on"}, "scripted_1"),)
    assert r2.tool_calls[0].id == "scripted_2"
    assert [c.id for c in r3.tool_calls] == ["scripted_3", "mine"]
    assert r1.usage == Usage(10, 5) and r1.provider == "scripted" and r1.model == "scripted-model"


async def test_calls_become_markup_text_without_native_tools() -> None:
    p = ScriptedProvider(
        [ScriptedProvider.calls(ToolCall("led", {"on": True}), text="Switching.")],
        native_tools=False,
    )
    assert not p.capabilities.native_tools
    r = await p.chat(REQ)
    assert r.tool_calls == ()
    assert r.text.startswith("Switching.\n<tool_call>")
    body = r.text.split("<tool_call>")[1].split("</tool_call>")[0]
    assert json.loads(body) == {"name": "led", "arguments": {"on": True}}


async def test_queued_exception_is_raised() -> None:
    p = ScriptedProvider([ProviderTimeout("slow"), "after"])
    with pytest.raises(ProviderTimeout):
        await p.chat(REQ)
    assert (await p.chat(REQ)).text == "after"


async def test_exhausted_queue_says_what_was_queued() -> None:
    p = ScriptedProvider(["only"])
    await p.chat(REQ)
    with pytest.raises(ScriptExhausted, match="1 were queued and 1 consumed") as info:
        await p.chat(REQ)
    assert (
        isinstance(info.value, ProviderError) and info.value.code == "scripted_provider_exhausted"
    )


async def test_stream_yields_thinking_text_pieces_calls_and_done() -> None:
    response = ChatResponse("hello world", (ToolCall("x", {}, "id1"),), thinking="hmm")
    p = ScriptedProvider([response], streaming=True)
    assert p.capabilities.streaming
    events = [e async for e in p.stream(REQ)]
    assert isinstance(events[0], ThinkingDelta) and events[0].text == "hmm"
    texts = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(texts) > 1 and "".join(texts) == "hello world"
    assert [e.call.name for e in events if isinstance(e, ToolCallReady)] == ["x"]
    assert isinstance(events[-1], StreamDone) and events[-1].response.text == "hello world"


async def test_add_and_close() -> None:
    p = ScriptedProvider()
    p.add("a").add("b")
    assert p.remaining == 2 and p.queued == 2
    await p.aclose()
    assert p.closed

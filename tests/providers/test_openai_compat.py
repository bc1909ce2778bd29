"""OpenAICompatProvider over httpx against a fake OpenAI-compatible server."""

from __future__ import annotations

import pytest

from clawseed_edge.api import (
    ChatMessage,
    ChatRequest,
    EmbeddingProvider,
    Provider,
    ProviderAuthFailed,
    ProviderBadResponse,
    ProviderContextTooLong,
    ProviderModelNotFound,
    ProviderRateLimited,
    ProviderServerError,
    ProviderStreamInterrupted,
    ProviderTimeout,
    StopReason,
    StreamDone,
    TextDelta,
    ThinkingDelta,
    ToolCall,
    ToolCallReady,
)
from clawseed_edge.providers import OpenAICompatProvider, ProviderConfig
from clawseed_edge.providers.openai_compat import decode_arguments
from clawseed_edge.testing.fake_servers import FakeOpenAI, Reply

from .helpers import ask, collect


def make(server: FakeOpenAI, **kw: object) -> OpenAICompatProvider:
    kw.setdefault("api_key", "sk-openai")
    kw.setdefault("name", "openai")
    return OpenAICompatProvider(
        ProviderConfig(base_url=server.url + "/v1", **kw)  # type: ignore[arg-type]
    )


async def test_plain_text(openai_server: FakeOpenAI) -> None:
    openai_server.queue(Reply.text("The LED is on.", cached_tokens=3))
    provider = make(openai_server, temperature=0.1)
    assert isinstance(provider, Provider) and isinstance(provider, EmbeddingProvider)
    response = await provider.chat(ask())
    assert response.text == "The LED is on."
    assert response.stop_reason is StopReason.END_TURN
    assert response.usage.cached_input_tokens == 3
    assert (response.provider, response.model) == ("openai", "gpt-4o-mini")
    sent = openai_server.requests[0]
    assert sent.headers["authorization"] == "Bearer sk-openai"
    assert sent.json["temperature"] == 0.1
    assert sent.json["tools"][0]["function"]["name"] == "led_on"
    await provider.aclose()


async def test_streamed_text_and_reasoning(openai_server: FakeOpenAI) -> None:
    openai_server.queue(Reply.text("one two three", thinking="hmm ok"))
    provider = make(openai_server)
    events = await collect(provider.stream(ask()))
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["one ", "two ", "three"]
    assert "".join(e.text for e in events if isinstance(e, ThinkingDelta)) == "hmm ok"
    done = events[-1]
    assert isinstance(done, StreamDone)
    assert done.response.text == "one two three"
    assert done.response.usage.output_tokens == 3  # from the include_usage chunk
    assert openai_server.requests[0].json["stream_options"] == {"include_usage": True}
    await provider.aclose()


async def test_one_tool_call(openai_server: FakeOpenAI) -> None:
    openai_server.queue(Reply.tool_call("led_on", {"pin": 17}))
    provider = make(openai_server)
    response = await provider.chat(ask())
    assert response.tool_calls == (ToolCall("led_on", {"pin": 17}, "call_1"),)
    assert response.stop_reason is StopReason.TOOL_USE
    await provider.aclose()


async def test_several_tool_calls_with_streamed_string_arguments(openai_server: FakeOpenAI) -> None:
    args = {"pin": 17, "label": "a label long enough to arrive in several pieces"}
    openai_server.queue(Reply.tool_calls([("led_on", args), ("led_off", {"pin": 27})]))
    provider = make(openai_server)
    events = await collect(provider.stream(ask()))
    calls = [e.call for e in events if isinstance(e, ToolCallReady)]
    assert calls == [ToolCall("led_on", args, "call_1"), ToolCall("led_off", {"pin": 27}, "call_2")]
    assert isinstance(events[-1], StreamDone)
    assert events[-1].response.stop_reason is StopReason.TOOL_USE
    await provider.aclose()


async def test_non_json_arguments_become_a_clear_error_not_a_crash(
    openai_server: FakeOpenAI,
) -> None:
    openai_server.queue(Reply.tool_call("led_on", '{"pin": 17'), Reply.tool_call("led_on", "[1]"))
    provider = make(openai_server)
    events = await collect(provider.stream(ask()))
    call = next(e.call for e in events if isinstance(e, ToolCallReady))
    assert call.arguments["_invalid_arguments"] == '{"pin": 17'
    assert "not valid JSON" in call.arguments["_error"]
    response = await provider.chat(ask())
    assert "not a JSON object" in response.tool_calls[0].arguments["_error"]
    await provider.aclose()


def test_decode_arguments() -> None:
    assert decode_arguments("t", '{"a": 1}') == {"a": 1}
    assert decode_arguments("t", "") == {}
    assert "_error" in decode_arguments("t", "nope")


async def test_history_shape(openai_server: FakeOpenAI) -> None:
    openai_server.queue(Reply.text("ok"))
    provider = make(openai_server)
    await provider.chat(
        ChatRequest(
            (
                ChatMessage.user("look", images=("aGk=",)),
                ChatMessage.assistant("", (ToolCall("led_on", {"pin": 1}, "call_7"),)),
                ChatMessage.tool("call_7", "done"),
            )
        )
    )
    messages = openai_server.requests[0].json["messages"]
    assert messages[0]["content"][1]["image_url"]["url"] == "data:image/png;base64,aGk="
    assert messages[1]["tool_calls"][0]["function"] == {"name": "led_on", "arguments": '{"pin": 1}'}
    assert messages[2] == {"role": "tool", "tool_call_id": "call_7", "content": "done"}
    await provider.aclose()


async def test_missing_and_rejected_key(openai_server: FakeOpenAI) -> None:
    missing = OpenAICompatProvider(ProviderConfig(name="groq", base_url=openai_server.url + "/v1"))
    with pytest.raises(ProviderAuthFailed, match=r"^no API key: set GROQ_API_KEY"):
        await missing.chat(ask())
    wrong = make(openai_server, api_key="sk-wrong")
    with pytest.raises(ProviderAuthFailed, match=r"HTTP 401.*OPENAI_API_KEY"):
        await wrong.chat(ask())
    await missing.aclose()
    await wrong.aclose()


async def test_local_server_needs_no_key() -> None:
    async with FakeOpenAI() as server:
        server.queue(Reply.text("local"))
        provider = OpenAICompatProvider(
            ProviderConfig(name="llamacpp", base_url=server.url + "/v1")
        )
        assert (await provider.chat(ask())).text == "local"
        assert "authorization" not in server.requests[0].headers
        await provider.aclose()


async def test_status_errors(openai_server: FakeOpenAI) -> None:
    openai_server.queue(
        Reply.error(429, "Rate limit reached", retry_after=1.5),
        Reply.error(500, "boom"),
        Reply.error(400, "This model's maximum context length is 8192 tokens"),
    )
    provider = make(openai_server)
    with pytest.raises(ProviderRateLimited) as info:
        await collect(provider.stream(ask()))
    assert info.value.retry_after == 1.5
    with pytest.raises(ProviderServerError, match=r"boom"):
        await provider.chat(ask())
    with pytest.raises(ProviderContextTooLong):
        await provider.chat(ask())
    await provider.aclose()


async def test_unknown_model() -> None:
    async with FakeOpenAI(models={"gpt-4o-mini"}) as server:
        provider = OpenAICompatProvider(
            ProviderConfig(name="openai-compatible", model="nope", base_url=server.url + "/v1")
        )
        with pytest.raises(ProviderModelNotFound, match=r"'nope'"):
            await provider.chat(ask())
        await provider.aclose()


async def test_stream_cut_mid_answer(openai_server: FakeOpenAI) -> None:
    openai_server.queue(Reply.cut("The LED is on", after=2))
    provider = make(openai_server)
    seen = []
    with pytest.raises(ProviderStreamInterrupted):
        async for event in provider.stream(ask()):
            seen.append(event)
    assert seen == [TextDelta("The "), TextDelta("LED ")]
    await provider.aclose()


@pytest.mark.parametrize(
    "reply",
    [Reply.garbage(), Reply.not_http(), Reply.garbage(b"data: {not json}\n\n")],
    ids=["binary", "not-http", "bad-sse-json"],
)
async def test_garbage_bytes(openai_server: FakeOpenAI, reply: Reply) -> None:
    openai_server.queue(reply, reply)
    provider = make(openai_server)
    with pytest.raises(ProviderBadResponse):
        await provider.chat(ask())
    with pytest.raises(ProviderBadResponse):
        await collect(provider.stream(ask()))
    await provider.aclose()


async def test_hung_server_times_out(openai_server: FakeOpenAI) -> None:
    openai_server.queue(Reply.hang())
    provider = make(openai_server, timeout_s=0.3)
    with pytest.raises(ProviderTimeout, match=r"timeout_s=0.3 s"):
        await collect(provider.stream(ask()))
    await provider.aclose()


async def test_embeddings(openai_server: FakeOpenAI) -> None:
    provider = make(openai_server, model="text-embedding-3-small")
    vectors = await provider.embed(["a", "b"])
    assert len(vectors) == 2 and len(vectors[0]) == openai_server.dimensions
    assert provider.embedding_dimensions == openai_server.dimensions
    assert openai_server.requests[0].json == {
        "model": "text-embedding-3-small",
        "input": ["a", "b"],
    }
    await provider.aclose()

"""AnthropicProvider through the real anthropic SDK against a fake Messages API (SSE)."""

from __future__ import annotations

import json

import pytest

from clawseed_edge.api import (
    ChatMessage,
    ChatRequest,
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
from clawseed_edge.providers import AnthropicProvider, ProviderConfig
from clawseed_edge.providers.anthropic import to_anthropic_messages
from clawseed_edge.testing.fake_servers import FakeAnthropic, Reply

from .helpers import ask, collect


def make(server: FakeAnthropic, **kw: object) -> AnthropicProvider:
    kw.setdefault("api_key", "sk-test")
    return AnthropicProvider(
        ProviderConfig(name="anthropic", base_url=server.url, **kw)  # type: ignore[arg-type]
    )


async def test_plain_text_caches_the_system_prompt(anthropic_server: FakeAnthropic) -> None:
    anthropic_server.queue(Reply.text("The LED is on.", cached_tokens=120, input_tokens=30))
    provider = make(anthropic_server)
    assert isinstance(provider, Provider)
    response = await provider.chat(ask())
    assert response.text == "The LED is on."
    assert response.stop_reason is StopReason.END_TURN
    assert response.usage.cached_input_tokens == 120
    assert response.usage.input_tokens == 30
    assert (response.provider, response.model) == ("anthropic", "claude-sonnet-4-6")
    sent = anthropic_server.requests[0].json
    assert sent["system"] == [
        {
            "type": "text",
            "text": "You control a Raspberry Pi.",
            "cache_control": {"type": "ephemeral"},
        }
    ]
    assert sent["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "switch the LED on"}]}
    ]
    assert sent["tools"][0]["input_schema"]["properties"] == {"pin": {"type": "integer"}}
    assert sent["max_tokens"] == 4096
    await provider.aclose()


async def test_streamed_text(anthropic_server: FakeAnthropic) -> None:
    anthropic_server.queue(Reply.text("one two three", cached_tokens=7))
    provider = make(anthropic_server)
    events = await collect(provider.stream(ask(tools=False)))
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["one ", "two ", "three"]
    done = events[-1]
    assert isinstance(done, StreamDone)
    assert done.response.text == "one two three"
    assert done.response.usage.cached_input_tokens == 7
    assert done.response.usage.output_tokens == 3
    assert anthropic_server.requests[0].json["stream"] is True
    await provider.aclose()


async def test_one_tool_call(anthropic_server: FakeAnthropic) -> None:
    anthropic_server.queue(Reply.tool_call("led_on", {"pin": 17}, content="Switching."))
    provider = make(anthropic_server)
    response = await provider.chat(ask())
    assert response.text == "Switching."
    assert response.tool_calls == (ToolCall("led_on", {"pin": 17}, "toolu_01"),)
    assert response.stop_reason is StopReason.TOOL_USE
    await provider.aclose()


async def test_several_tool_calls_stream_with_reassembled_json(
    anthropic_server: FakeAnthropic,
) -> None:
    args = {"pin": 17, "label": "a label long enough to span several input_json_delta pieces"}
    anthropic_server.queue(Reply.tool_calls([("led_on", args), ("led_on", {"pin": 27})]))
    provider = make(anthropic_server)
    events = await collect(provider.stream(ask()))
    calls = [e.call for e in events if isinstance(e, ToolCallReady)]
    assert calls == [
        ToolCall("led_on", args, "toolu_01"),
        ToolCall("led_on", {"pin": 27}, "toolu_02"),
    ]
    done = events[-1]
    assert isinstance(done, StreamDone)
    assert done.response.stop_reason is StopReason.TOOL_USE
    assert done.response.tool_calls == tuple(calls)
    await provider.aclose()


async def test_thinking_deltas(anthropic_server: FakeAnthropic) -> None:
    anthropic_server.queue(Reply.text("Yes.", thinking="The pin is free."))
    provider = make(anthropic_server)
    events = await collect(provider.stream(ask()))
    assert "".join(e.text for e in events if isinstance(e, ThinkingDelta)) == "The pin is free."
    assert isinstance(events[-1], StreamDone) and events[-1].response.thinking == "The pin is free."
    await provider.aclose()


def test_history_becomes_alternating_messages_with_tool_results() -> None:
    system, messages = to_anthropic_messages(
        (
            ChatMessage.system("a"),
            ChatMessage.system("b"),
            ChatMessage.user("led on", images=("iVBORw0KGgo=",)),
            ChatMessage.assistant("ok", (ToolCall("led_on", {"pin": 1}, "toolu_9"),)),
            ChatMessage.tool("toolu_9", "done", name="led_on"),
            ChatMessage.user("thanks"),
        )
    )
    assert system == "a\n\nb"
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[0]["content"][0]["source"]["media_type"] == "image/png"
    assert messages[1]["content"][1] == {
        "type": "tool_use",
        "id": "toolu_9",
        "name": "led_on",
        "input": {"pin": 1},
    }
    assert messages[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_9", "content": "done"},
        {"type": "text", "text": "thanks"},
    ]


async def test_missing_key_names_the_variable(anthropic_server: FakeAnthropic) -> None:
    provider = AnthropicProvider(
        ProviderConfig(name="anthropic", base_url=anthropic_server.url, api_key_env="MY_CLAUDE_KEY")
    )
    with pytest.raises(ProviderAuthFailed, match=r"^no API key: set MY_CLAUDE_KEY"):
        await provider.chat(ask())
    assert anthropic_server.requests == []
    await provider.aclose()


async def test_key_read_from_the_configured_variable(
    anthropic_server: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    anthropic_server.queue(Reply.text("hi"))
    provider = AnthropicProvider(ProviderConfig(name="anthropic", base_url=anthropic_server.url))
    assert (await provider.chat(ask())).text == "hi"
    await provider.aclose()


async def test_rejected_key(anthropic_server: FakeAnthropic) -> None:
    provider = make(anthropic_server, api_key="sk-wrong")
    with pytest.raises(ProviderAuthFailed, match=r"rejected.*HTTP 401.*ANTHROPIC_API_KEY"):
        await provider.chat(ask())
    await provider.aclose()


async def test_status_errors_are_typed(anthropic_server: FakeAnthropic) -> None:
    anthropic_server.queue(
        Reply.error(429, "slow down", retry_after=2),
        Reply.error(529, "Overloaded"),
        Reply.error(400, "prompt is too long: 210000 tokens > 200000 maximum"),
        Reply.error(404, "model: claude-nope"),
    )
    provider = make(anthropic_server)
    with pytest.raises(ProviderRateLimited) as limited:
        await provider.chat(ask())
    assert limited.value.retry_after == 2.0
    with pytest.raises(ProviderServerError):
        await collect(provider.stream(ask()))
    with pytest.raises(ProviderContextTooLong, match=r"shorten the conversation"):
        await provider.chat(ask())
    with pytest.raises(ProviderModelNotFound, match=r"claude-sonnet-4-6"):
        await provider.chat(ask())
    await provider.aclose()


async def test_stream_cut_mid_answer(anthropic_server: FakeAnthropic) -> None:
    anthropic_server.queue(Reply.cut("The LED is on", after=1))
    provider = make(anthropic_server)
    seen = []
    with pytest.raises(ProviderStreamInterrupted):
        async for event in provider.stream(ask()):
            seen.append(event)
    assert seen == [TextDelta("The ")]
    await provider.aclose()


@pytest.mark.parametrize(
    "reply",
    [Reply.garbage(), Reply.not_http(), Reply.garbage(b'{"unexpected": true}')],
    ids=["binary", "not-http", "wrong-json"],
)
async def test_garbage_bytes(anthropic_server: FakeAnthropic, reply: Reply) -> None:
    anthropic_server.queue(reply, reply)
    provider = make(anthropic_server)
    with pytest.raises(ProviderBadResponse):
        await provider.chat(ask())
    with pytest.raises(ProviderBadResponse):
        await collect(provider.stream(ask()))
    await provider.aclose()


async def test_hung_server_times_out(anthropic_server: FakeAnthropic) -> None:
    anthropic_server.queue(Reply.hang())
    provider = make(anthropic_server, timeout_s=0.3)
    with pytest.raises(ProviderTimeout, match=r"timeout_s=0.3 s"):
        await provider.chat(ask())
    # the SDK's own retries are off: one request only
    assert len(anthropic_server.requests) == 1
    await provider.aclose()


async def test_bad_tool_json_in_stream_is_a_bad_response(anthropic_server: FakeAnthropic) -> None:
    anthropic_server.queue(Reply.tool_call("led_on", '{"pin": 1'))
    provider = make(anthropic_server)
    with pytest.raises(ProviderBadResponse, match=r"led_on"):
        await collect(provider.stream(ask()))
    await provider.aclose()


async def test_request_temperature_and_max_tokens(anthropic_server: FakeAnthropic) -> None:
    anthropic_server.queue(Reply.text("ok"))
    provider = make(anthropic_server, temperature=0.5, max_tokens=100)
    await provider.chat(ChatRequest((ChatMessage.user("hi"),), max_tokens=50))
    sent = anthropic_server.requests[0].json
    assert sent["temperature"] == 0.5 and sent["max_tokens"] == 50
    assert "system" not in sent and "tools" not in sent
    assert json.loads(anthropic_server.requests[0].body)["model"] == "claude-sonnet-4-6"
    await provider.aclose()


@pytest.mark.parametrize("base_url", ["", "http://127.0.0.1:9"])
async def test_offline_says_what_cannot_be_reached(
    base_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hosted API is not "a model server" the user runs; a base_url of their own is."""
    import httpx

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    provider = AnthropicProvider(ProviderConfig(name="anthropic", base_url=base_url))
    sdk = provider._anthropic
    lost = sdk.APIConnectionError(request=httpx.Request("POST", "https://example.invalid/v1"))
    lost.__cause__ = ConnectionError("network is unreachable")
    text = str(provider._error(lost, "claude-x"))
    if base_url:
        assert text.startswith(f"no model server at {base_url}: check provider.base_url"), text
    else:
        assert text.startswith("cannot reach the Anthropic API: check this machine's network"), text
    await provider.aclose()

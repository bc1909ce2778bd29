"""OllamaProvider (its own HTTP client, no SDK) against a fake Ollama speaking NDJSON."""

from __future__ import annotations

import socket

import pytest

from clawseed_edge.api import (
    ChatMessage,
    ChatRequest,
    EmbeddingProvider,
    Provider,
    ProviderBadResponse,
    ProviderError,
    ProviderModelNotFound,
    ProviderRateLimited,
    ProviderServerError,
    ProviderStreamInterrupted,
    ProviderTimeout,
    ProviderUnreachable,
    StopReason,
    StreamDone,
    TextDelta,
    ThinkingDelta,
    ToolCall,
    ToolCallReady,
    ToolSpec,
)
from clawseed_edge.providers import OllamaProvider, ProviderConfig
from clawseed_edge.testing.fake_servers import FakeOllama, Reply

from .helpers import ask, collect


def make(server: FakeOllama, **kw: object) -> OllamaProvider:
    kw.setdefault("constrained", "off")  # the plain protocol; tests/providers/test_constrained.py
    return OllamaProvider(ProviderConfig(base_url=server.url, **kw))  # type: ignore[arg-type]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_it_is_a_provider_and_an_embedding_provider(ollama: FakeOllama) -> None:
    provider = make(ollama)
    assert isinstance(provider, Provider)
    assert isinstance(provider, EmbeddingProvider)
    await provider.aclose()
    await provider.aclose()  # idempotent


async def test_plain_text_with_options_from_config(ollama: FakeOllama) -> None:
    ollama.queue(Reply.text("The LED is on.", output_tokens=4, input_tokens=20))
    provider = make(ollama, num_ctx=4096, temperature=0.2, keep_alive="10m", max_tokens=64)
    response = await provider.chat(ask())
    assert response.text == "The LED is on."
    assert response.tool_calls == ()
    assert response.stop_reason is StopReason.END_TURN
    assert response.usage.input_tokens == 20 and response.usage.output_tokens == 4
    assert (response.provider, response.model) == ("ollama", "qwen2.5:3b")
    sent = ollama.requests_to("/api/chat")[0].json
    assert sent["stream"] is False
    assert sent["options"] == {"num_ctx": 4096, "temperature": 0.2, "num_predict": 64}
    assert sent["keep_alive"] == "10m"
    assert sent["messages"][0] == {"role": "system", "content": "You control a Raspberry Pi."}
    assert sent["tools"][0]["function"]["name"] == "led_on"
    await provider.aclose()


async def test_streamed_text_arrives_in_pieces(ollama: FakeOllama) -> None:
    ollama.queue(Reply.text("one two three"))
    provider = make(ollama)
    events = await collect(provider.stream(ask(tools=False)))
    texts = [e.text for e in events if isinstance(e, TextDelta)]
    assert texts == ["one ", "two ", "three"]
    assert isinstance(events[-1], StreamDone)
    assert events[-1].response.text == "one two three"
    assert ollama.requests_to("/api/chat")[0].json["stream"] is True
    await provider.aclose()


async def test_one_tool_call_arrives_as_a_dict(ollama: FakeOllama) -> None:
    ollama.queue(Reply.tool_call("led_on", {"pin": 17}))
    provider = make(ollama)
    response = await provider.chat(ask())
    assert response.tool_calls == (ToolCall("led_on", {"pin": 17}, "call_1"),)
    assert response.stop_reason is StopReason.TOOL_USE
    await provider.aclose()


async def test_several_tool_calls_streamed(ollama: FakeOllama) -> None:
    ollama.queue(Reply.tool_calls([("led_on", {"pin": 17}), ("led_on", {"pin": 27})]))
    provider = make(ollama)
    events = await collect(provider.stream(ask()))
    calls = [e.call for e in events if isinstance(e, ToolCallReady)]
    assert [c.arguments["pin"] for c in calls] == [17, 27]
    assert len({c.id for c in calls}) == 2
    done = events[-1]
    assert isinstance(done, StreamDone) and done.response.tool_calls == tuple(calls)
    assert done.response.stop_reason is StopReason.TOOL_USE
    await provider.aclose()


async def test_history_with_tool_calls_and_results_is_sent_in_ollama_shape(
    ollama: FakeOllama,
) -> None:
    ollama.queue(Reply.text("done"))
    provider = make(ollama)
    request = ChatRequest(
        (
            ChatMessage.user("led on", images=("aGVsbG8=",)),
            ChatMessage.assistant("", (ToolCall("led_on", {"pin": 17}, "call_1"),)),
            ChatMessage.tool("call_1", "ok", name="led_on"),
        )
    )
    await provider.chat(request)
    messages = ollama.requests_to("/api/chat")[0].json["messages"]
    assert messages[0]["images"] == ["aGVsbG8="]
    assert messages[1]["tool_calls"] == [{"function": {"name": "led_on", "arguments": {"pin": 17}}}]
    assert messages[2] == {"role": "tool", "content": "ok", "tool_name": "led_on"}
    await provider.aclose()


async def test_thinking_becomes_thinking_deltas(ollama: FakeOllama) -> None:
    ollama.queue(Reply.text("Yes.", thinking="Let me check the pin."))
    provider = make(ollama, model="qwen3:4b", think=True)
    events = await collect(provider.stream(ask(tools=False)))
    thinking = "".join(e.text for e in events if isinstance(e, ThinkingDelta))
    assert thinking == "Let me check the pin."
    assert isinstance(events[-1], StreamDone)
    assert events[-1].response.thinking == "Let me check the pin."
    assert events[-1].response.text == "Yes."
    assert ollama.requests_to("/api/chat")[0].json["think"] is True
    await provider.aclose()


async def test_probe_reports_a_model_without_tool_support(ollama: FakeOllama) -> None:
    provider = make(ollama, model="gemma3:1b")
    assert provider.capabilities.native_tools is True  # assumed before the probe
    caps = await provider.probe()
    assert caps.native_tools is False
    assert provider.capabilities.native_tools is False
    assert provider.model_capabilities == ("completion",)
    await provider.probe()
    assert len(ollama.requests_to("/api/show")) == 1  # cached
    await provider.aclose()


async def test_probe_reports_tools_and_vision(ollama: FakeOllama) -> None:
    tools = make(ollama)
    vision = make(ollama, model="llava:7b")
    assert (await tools.probe()).native_tools is True
    caps = await vision.probe()
    assert caps.vision is True and caps.native_tools is False
    await tools.aclose()
    await vision.aclose()


async def test_tools_sent_to_a_model_without_support_flip_the_capability(
    ollama: FakeOllama,
) -> None:
    provider = make(ollama, model="gemma3:1b")
    with pytest.raises(ProviderError, match=r"does not support tools"):
        await provider.chat(ask())
    assert provider.capabilities.native_tools is False
    await provider.aclose()


async def test_model_not_pulled(ollama: FakeOllama) -> None:
    provider = make(ollama, model="llama3.2:1b")
    with pytest.raises(ProviderModelNotFound) as info:
        await provider.chat(ask())
    assert str(info.value) == "model 'llama3.2:1b' is not pulled: run `ollama pull llama3.2:1b`"
    assert info.value.retryable is False
    with pytest.raises(ProviderModelNotFound, match=r"ollama pull llama3.2:1b"):
        await provider.probe()
    with pytest.raises(ProviderModelNotFound):
        await collect(provider.stream(ask()))
    await provider.aclose()


async def test_unreachable_server_says_to_run_ollama_serve() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    provider = OllamaProvider(ProviderConfig(base_url=url))
    for attempt in (provider.chat(ask()), provider.probe(), collect(provider.stream(ask()))):
        with pytest.raises(ProviderUnreachable) as info:
            await attempt
        assert str(info.value) == f"no model server at {url}: is `ollama serve` running?"
    await provider.aclose()


async def test_stream_cut_mid_answer_is_an_interruption(ollama: FakeOllama) -> None:
    ollama.queue(Reply.cut("The LED is now on and", after=2))
    provider = make(ollama)
    seen: list[str] = []
    with pytest.raises(ProviderStreamInterrupted, match=r"broke off after text was shown"):
        async for event in provider.stream(ask()):
            if isinstance(event, TextDelta):
                seen.append(event.text)
    assert seen == ["The ", "LED "]
    await provider.aclose()


async def test_stream_cut_before_text_is_a_retryable_error(ollama: FakeOllama) -> None:
    ollama.queue(Reply.cut("never shown", after=0))
    provider = make(ollama)
    with pytest.raises(ProviderBadResponse) as info:
        await collect(provider.stream(ask()))
    assert info.value.retryable is True
    await provider.aclose()


@pytest.mark.parametrize("reply", [Reply.garbage(), Reply.not_http()], ids=["body", "not-http"])
async def test_garbage_bytes(ollama: FakeOllama, reply: Reply) -> None:
    ollama.queue(reply, reply)
    provider = make(ollama)
    with pytest.raises(ProviderBadResponse, match=r"ollama"):
        await provider.chat(ask())
    with pytest.raises(ProviderBadResponse):
        await collect(provider.stream(ask()))
    await provider.aclose()


async def test_hung_server_times_out(ollama: FakeOllama) -> None:
    ollama.queue(Reply.hang(), Reply.hang())
    provider = make(ollama, timeout_s=0.3)
    with pytest.raises(ProviderTimeout, match=r"timeout_s=0.3 s"):
        await provider.chat(ask())
    with pytest.raises(ProviderTimeout):
        await collect(provider.stream(ask()))
    await provider.aclose()


async def test_http_errors_are_typed(ollama: FakeOllama) -> None:
    ollama.queue(Reply.error(503, "loading model"), Reply.error(429, "busy"))
    provider = make(ollama)
    with pytest.raises(ProviderServerError, match=r"loading model"):
        await provider.chat(ask())
    with pytest.raises(ProviderRateLimited):
        await provider.chat(ask())
    await provider.aclose()


async def test_hint_in_request_model_is_not_sent_as_a_model(ollama: FakeOllama) -> None:
    ollama.queue(Reply.text("ok"))
    provider = make(ollama)
    await provider.chat(ask(model="hint:fast"))
    assert ollama.requests_to("/api/chat")[0].json["model"] == "qwen2.5:3b"
    await provider.aclose()


async def test_embeddings_through_api_embed(ollama: FakeOllama) -> None:
    provider = make(ollama, model="nomic-embed-text")
    assert provider.embedding_dimensions is None
    vectors = await provider.embed(["red led", "blue led", "red led"])
    assert len(vectors) == 3 and len(vectors[0]) == ollama.dimensions
    assert vectors[0] == vectors[2] and vectors[0] != vectors[1]
    assert provider.embedding_dimensions == ollama.dimensions
    assert ollama.requests_to("/api/embed")[0].json["input"] == ["red led", "blue led", "red led"]
    await provider.aclose()


async def test_schema_keys_the_sdk_drops_reach_the_model_in_the_description(
    ollama: FakeOllama,
) -> None:
    ollama.queue(Reply.text("ok"))
    spec = ToolSpec(
        "pwm_set",
        "Set a PWM duty cycle",
        {
            "type": "object",
            "properties": {
                "duty": {"type": "number", "description": "0..1", "minimum": 0, "maximum": 1},
                "pin": {"type": "string", "enum": ["fan", "led"]},
            },
            "required": ["duty"],
        },
    )
    provider = make(ollama)
    await provider.chat(ChatRequest((ChatMessage.user("fan half"),), tools=(spec,)))
    params = ollama.requests_to("/api/chat")[0].json["tools"][0]["function"]["parameters"]
    assert params["required"] == ["duty"]
    assert params["properties"]["duty"] == {
        "type": "number",
        "description": '0..1 (schema: {"minimum":0,"maximum":1})',
    }
    assert params["properties"]["pin"] == {"type": "string", "enum": ["fan", "led"]}
    await provider.aclose()

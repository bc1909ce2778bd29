"""ReliableProvider: retries, backoff, Retry-After, fallback, and no silent stream replay."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

import pytest

from clawseed_edge.api import (
    ChatResponse,
    ProviderAuthFailed,
    ProviderCapabilities,
    ProviderError,
    ProviderRateLimited,
    ProviderServerError,
    ProviderStreamInterrupted,
    ProviderUnreachable,
    StreamDone,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallReady,
)
from clawseed_edge.providers import (
    OllamaProvider,
    ProviderConfig,
    ReliableProvider,
    create_provider,
)
from clawseed_edge.testing.fake_servers import FakeAnthropic, FakeOllama, Reply

from .helpers import ask, collect

Outcome = ChatResponse | ProviderError


class Scripted:
    """A provider double that answers from a script (one outcome per call)."""

    def __init__(
        self,
        name: str,
        outcomes: Sequence[Outcome] = (),
        streams: Sequence[tuple[list[StreamEvent], ProviderError | None]] = (),
    ) -> None:
        self.name = name
        self.model = f"{name}-model"
        self.outcomes = list(outcomes)
        self.streams = list(streams)
        self.calls = 0
        self.closed = 0

    @property
    def capabilities(self) -> ProviderCapabilities:
        return ProviderCapabilities(native_tools=self.name == "primary")

    async def chat(self, request: object) -> ChatResponse:
        self.calls += 1
        outcome = self.outcomes.pop(0)
        if isinstance(outcome, ProviderError):
            raise outcome
        return outcome

    async def stream(self, request: object) -> AsyncIterator[StreamEvent]:
        self.calls += 1
        events, error = self.streams.pop(0)
        for event in events:
            yield event
        if error is not None:
            raise error

    async def aclose(self) -> None:
        self.closed += 1


class Sleeps:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


def reliable(*providers: Scripted, **kw: object) -> tuple[ReliableProvider, Sleeps]:
    sleeps = Sleeps()
    kw.setdefault("random", lambda: 1.0)
    return ReliableProvider(providers, sleep=sleeps, **kw), sleeps  # type: ignore[arg-type]


def down() -> ProviderUnreachable:
    return ProviderUnreachable("no model server", provider="x")


async def test_retries_with_exponential_backoff_then_succeeds() -> None:
    primary = Scripted("primary", [down(), down(), ChatResponse("hi")])
    provider, sleeps = reliable(primary, max_retries=2, base_delay_s=0.5)
    response = await provider.chat(ask())
    assert response.text == "hi"
    assert (response.provider, response.model) == ("primary", "primary-model")
    assert sleeps.delays == [0.5, 1.0]
    assert primary.calls == 3


async def test_jitter_scales_the_delay_down_to_half() -> None:
    primary = Scripted("primary", [down(), ChatResponse("hi")])
    provider, sleeps = reliable(primary, base_delay_s=2.0, random=lambda: 0.0)
    await provider.chat(ask())
    assert sleeps.delays == [1.0]


async def test_delay_is_capped_by_max_delay() -> None:
    primary = Scripted("primary", [down(), down(), down(), ChatResponse("hi")])
    provider, sleeps = reliable(primary, max_retries=3, base_delay_s=3.0, max_delay_s=4.0)
    await provider.chat(ask())
    assert sleeps.delays == [3.0, 4.0, 4.0]


async def test_retry_after_is_honoured() -> None:
    limited = ProviderRateLimited("slow down", retry_after=2.5)
    primary = Scripted("primary", [limited, ChatResponse("hi")])
    provider, sleeps = reliable(primary)
    assert (await provider.chat(ask())).text == "hi"
    assert sleeps.delays == [2.5]


async def test_a_retry_after_longer_than_max_delay_goes_to_the_next_provider() -> None:
    primary = Scripted("primary", [ProviderRateLimited("slow", retry_after=60)])
    secondary = Scripted("secondary", [ChatResponse("from b")])
    provider, sleeps = reliable(primary, secondary, max_delay_s=8)
    response = await provider.chat(ask())
    assert (response.text, response.provider) == ("from b", "secondary")
    assert sleeps.delays == []


async def test_auth_is_not_retried_but_falls_back() -> None:
    primary = Scripted("primary", [ProviderAuthFailed("no API key: set X")])
    secondary = Scripted("secondary", [ChatResponse("ok", provider="secondary", model="m2")])
    provider, sleeps = reliable(primary, secondary)
    response = await provider.chat(ask())
    assert (response.provider, response.model) == ("secondary", "m2")
    assert primary.calls == 1 and sleeps.delays == []


async def test_a_plain_refusal_is_neither_retried_nor_passed_on() -> None:
    refusal = ProviderError("refused (HTTP 400: bad tool schema)", status=400)
    primary = Scripted("primary", [refusal])
    secondary = Scripted("secondary", [ChatResponse("never")])
    provider, _ = reliable(primary, secondary)
    with pytest.raises(ProviderError) as info:
        await provider.chat(ask())
    assert info.value is refusal
    assert secondary.calls == 0


async def test_when_all_fail_the_error_lists_every_provider() -> None:
    primary = Scripted("primary", [down()])
    secondary = Scripted("secondary", [ProviderServerError("HTTP 500: boom")])
    provider, _ = reliable(primary, secondary, max_retries=0)
    with pytest.raises(ProviderServerError) as info:
        await provider.chat(ask())
    message = str(info.value)
    assert "primary (primary-model): no model server" in message
    assert "secondary (secondary-model): HTTP 500: boom" in message


async def test_capabilities_and_names_are_the_primarys_and_aclose_closes_all() -> None:
    primary, secondary = Scripted("primary"), Scripted("secondary")
    provider, _ = reliable(primary, secondary)
    assert provider.capabilities.native_tools is True
    assert (provider.name, provider.model) == ("primary", "primary-model")
    await provider.aclose()
    assert primary.closed == secondary.closed == 1


def test_needs_a_provider() -> None:
    with pytest.raises(ValueError):
        ReliableProvider([])


# --- streams ----------------------------------------------------------------------------------


async def test_stream_failure_after_text_is_never_replayed() -> None:
    primary = Scripted("primary", streams=[([TextDelta("The LED")], ProviderServerError("cut"))])
    secondary = Scripted("secondary", streams=[([TextDelta("again")], None)])
    provider, sleeps = reliable(primary, secondary)
    seen: list[StreamEvent] = []
    with pytest.raises(ProviderStreamInterrupted, match=r"broke off after text was shown"):
        async for event in provider.stream(ask()):
            seen.append(event)
    assert seen == [TextDelta("The LED")]
    assert secondary.calls == 0 and sleeps.delays == []


async def test_stream_failure_after_a_tool_call_is_never_replayed() -> None:
    call = ToolCallReady(ToolCall("led_on", {"pin": 1}, "c1"))
    primary = Scripted("primary", streams=[([call], down())])
    provider, _ = reliable(primary)
    with pytest.raises(ProviderStreamInterrupted):
        await collect(provider.stream(ask()))
    assert primary.calls == 1


async def test_stream_failure_before_text_retries_then_falls_back() -> None:
    primary = Scripted("primary", streams=[([], down()), ([], down())])
    done = StreamDone(ChatResponse("hello"))
    secondary = Scripted("secondary", streams=[([TextDelta("hello"), done], None)])
    provider, sleeps = reliable(primary, secondary, max_retries=1)
    events = await collect(provider.stream(ask()))
    assert events[0] == TextDelta("hello")
    final = events[-1]
    assert isinstance(final, StreamDone)
    assert (final.response.provider, final.response.model) == ("secondary", "secondary-model")
    assert primary.calls == 2 and len(sleeps.delays) == 1


async def test_an_interruption_from_the_provider_passes_through() -> None:
    interrupted = ProviderStreamInterrupted("cut after text")
    primary = Scripted("primary", streams=[([], interrupted)])
    secondary = Scripted("secondary", streams=[([], None)])
    provider, _ = reliable(primary, secondary)
    with pytest.raises(ProviderStreamInterrupted):
        await collect(provider.stream(ask()))
    assert secondary.calls == 0


# --- through the real SDKs --------------------------------------------------------------------


async def test_429_then_success_against_fake_ollama(ollama: FakeOllama) -> None:
    ollama.queue(Reply.error(429, "busy"), Reply.text("done"))
    sleeps = Sleeps()
    provider = ReliableProvider(
        [OllamaProvider(ProviderConfig(base_url=ollama.url, constrained="off"))],
        sleep=sleeps,
        random=lambda: 1.0,
    )
    events = await collect(provider.stream(ask()))
    assert isinstance(events[-1], StreamDone) and events[-1].response.text == "done"
    assert sleeps.delays == [0.5]
    assert len(ollama.requests_to("/api/chat")) == 2
    await provider.aclose()


async def test_429_retry_after_honoured_against_fake_anthropic(
    anthropic_server: FakeAnthropic,
) -> None:
    anthropic_server.queue(Reply.error(429, "rate limited", retry_after=3), Reply.text("hi"))
    sleeps = Sleeps()
    config = ProviderConfig(name="anthropic", api_key="sk-test", base_url=anthropic_server.url)
    chain = create_provider(config, sleep=sleeps)  # injected, not patched into the chain
    assert isinstance(chain, ReliableProvider)
    response = await chain.chat(ask())
    assert response.text == "hi"
    assert sleeps.delays == [3.0]
    await chain.aclose()


async def test_500_on_primary_falls_back_to_the_secondary(
    ollama: FakeOllama, anthropic_server: FakeAnthropic
) -> None:
    ollama.queue(Reply.error(500, "model crashed"), Reply.error(500, "model crashed"))
    anthropic_server.queue(Reply.text("from claude"))
    config = ProviderConfig(
        name="ollama",
        base_url=ollama.url,
        constrained="off",
        max_retries=1,
        fallbacks=[ProviderConfig(name="claude", api_key="sk-test", base_url=anthropic_server.url)],
    )
    sleeps = Sleeps()
    chain = create_provider(config, sleep=sleeps)
    assert isinstance(chain, ReliableProvider)
    events = await collect(chain.stream(ask()))
    done = events[-1]
    assert isinstance(done, StreamDone)
    assert done.response.text == "from claude"
    assert (done.response.provider, done.response.model) == ("claude", "claude-sonnet-4-6")
    assert len(ollama.requests_to("/api/chat")) == 2 and len(sleeps.delays) == 1
    await chain.aclose()


async def test_a_model_named_by_the_request_goes_to_the_primary_only() -> None:
    class Recording(Scripted):
        def __init__(self, *a: object, **kw: object) -> None:
            super().__init__(*a, **kw)  # type: ignore[arg-type]
            self.models: list[str | None] = []

        async def chat(self, request: object) -> ChatResponse:
            self.models.append(request.model)  # type: ignore[attr-defined]
            return await super().chat(request)

    primary = Recording("primary", [down()])
    secondary = Recording("secondary", [ChatResponse("ok")])
    provider, _ = reliable(primary, secondary, max_retries=0)
    response = await provider.chat(ask(model="qwen2.5:7b"))
    assert primary.models == ["qwen2.5:7b"] and secondary.models == [None]
    assert response.model == "secondary-model"


async def test_a_consumer_that_stops_early_closes_the_stream(ollama: FakeOllama) -> None:
    ollama.queue(Reply.text("many words in this answer"), Reply.text("next"))
    provider = ReliableProvider(
        [OllamaProvider(ProviderConfig(base_url=ollama.url, constrained="off"))]
    )
    stream = provider.stream(ask())
    first = await anext(stream)
    assert first == TextDelta("many ")
    await stream.aclose()  # type: ignore[attr-defined]
    events = await collect(provider.stream(ask()))  # the provider is still usable
    assert isinstance(events[-1], StreamDone) and events[-1].response.text == "next"
    await provider.aclose()


async def test_cut_stream_on_primary_is_reported_not_replayed_on_the_fallback(
    ollama: FakeOllama, anthropic_server: FakeAnthropic
) -> None:
    ollama.queue(Reply.cut("The LED is", after=1))
    anthropic_server.queue(Reply.text("should never be asked"))
    chain = create_provider(
        ProviderConfig(
            base_url=ollama.url,
            constrained="off",
            fallbacks=[
                ProviderConfig(name="anthropic", api_key="sk-test", base_url=anthropic_server.url)
            ],
        )
    )
    seen: list[StreamEvent] = []
    with pytest.raises(ProviderStreamInterrupted, match=r"ask again"):
        async for event in chain.stream(ask()):
            seen.append(event)
    assert seen == [TextDelta("The ")]
    assert anthropic_server.requests == []
    await chain.aclose()

"""Every provider bounds a response: its size and its total time (issue 14 items 2 and 10)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from clawseed_edge.api import (
    Provider,
    ProviderBadResponse,
    ProviderStreamInterrupted,
    ProviderTimeout,
)
from clawseed_edge.providers import (
    AnthropicProvider,
    OllamaProvider,
    OpenAICompatProvider,
    ProviderConfig,
)
from clawseed_edge.testing.fake_servers import (
    FakeAnthropic,
    FakeModelServer,
    FakeOllama,
    FakeOpenAI,
    Reply,
)

from .helpers import ask, collect

LIMIT = 4096
BIG = "word " * 4000  # 20 KB of text, over LIMIT in any of the three protocols


def _ollama(url: str, **kw: Any) -> Provider:
    kw.setdefault("constrained", "off")  # the limits of the plain protocol
    return OllamaProvider(ProviderConfig(base_url=url, **kw))


def _anthropic(url: str, **kw: Any) -> Provider:
    return AnthropicProvider(ProviderConfig(name="anthropic", base_url=url, api_key="k", **kw))


def _openai(url: str, **kw: Any) -> Provider:
    return OpenAICompatProvider(
        ProviderConfig(name="openai", base_url=url + "/v1", api_key="k", **kw)
    )


SERVERS: list[tuple[str, Callable[[], FakeModelServer], Callable[..., Provider]]] = [
    ("ollama", lambda: FakeOllama(models=None), _ollama),
    ("anthropic", lambda: FakeAnthropic(), _anthropic),
    ("openai", lambda: FakeOpenAI(), _openai),
]
IDS = [s[0] for s in SERVERS]


@pytest.mark.parametrize(("name", "server_factory", "provider_factory"), SERVERS, ids=IDS)
@pytest.mark.parametrize("streaming", [False, True], ids=["chat", "stream"])
async def test_a_response_over_the_byte_limit_is_refused(
    name: str,
    server_factory: Callable[[], FakeModelServer],
    provider_factory: Callable[..., Provider],
    streaming: bool,
) -> None:
    async with server_factory() as server:
        server.queue(Reply.text(BIG))
        provider = provider_factory(server.url, max_response_bytes=LIMIT)
        try:
            # streamed text already shown makes it an interruption; before that, a bad response
            expected = (
                (ProviderBadResponse, ProviderStreamInterrupted)
                if streaming
                else ProviderBadResponse
            )
            with pytest.raises(expected) as caught:
                async with asyncio.timeout(20):
                    if streaming:
                        await collect(provider.stream(ask()))
                    else:
                        await provider.chat(ask())
        finally:
            await provider.aclose()
    message = str(caught.value)
    assert "max_response_bytes" in message and str(LIMIT) in message
    assert "bytes in one response" in message


@pytest.mark.parametrize(("name", "server_factory", "provider_factory"), SERVERS, ids=IDS)
async def test_a_response_within_the_limit_passes(
    name: str,
    server_factory: Callable[[], FakeModelServer],
    provider_factory: Callable[..., Provider],
) -> None:
    async with server_factory() as server:
        server.queue(Reply.text("The LED is on."), Reply.text("The LED is on."))
        provider = provider_factory(server.url, max_response_bytes=LIMIT)
        try:
            assert (await provider.chat(ask())).text == "The LED is on."
            events = await collect(provider.stream(ask()))
        finally:
            await provider.aclose()
    assert events[-1].response.text == "The LED is on."  # type: ignore[attr-defined]


@pytest.mark.parametrize(("name", "server_factory", "provider_factory"), SERVERS, ids=IDS)
@pytest.mark.parametrize("streaming", [False, True], ids=["chat", "stream"])
async def test_a_trickling_server_hits_the_overall_deadline(
    name: str,
    server_factory: Callable[[], FakeModelServer],
    provider_factory: Callable[..., Provider],
    streaming: bool,
) -> None:
    # one byte every 0.05 s keeps each read within timeout_s for ever; deadline_s ends it
    async with server_factory() as server:
        server.queue(Reply.trickle(0.05))
        provider = provider_factory(server.url, timeout_s=5, deadline_s=0.5)
        try:
            with pytest.raises(ProviderTimeout) as caught:
                async with asyncio.timeout(20):  # the test fails, not hangs, without a deadline
                    if streaming:
                        await collect(provider.stream(ask()))
                    else:
                        await provider.chat(ask())
        finally:
            await provider.aclose()
    assert "deadline_s=0.5 s" in str(caught.value)


DEEP = '{"a": ' * 10_000 + "1" + "}" * 10_000


def test_deeply_nested_arguments_are_invalid_not_a_crash() -> None:
    from clawseed_edge.providers.openai_compat import decode_arguments

    decoded = decode_arguments("relay_set", DEEP)
    assert "nested too deeply" in decoded["_error"]
    # the raw text is kept only as a bounded preview: it goes back to the model and to history
    assert len(decoded["_invalid_arguments"]) < 1200


async def test_ollama_deeply_nested_answer_is_a_bad_response() -> None:
    async with FakeOllama(models=None) as server:
        server.queue(Reply.garbage(('{"message": ' + DEEP + "}").encode()))
        provider = _ollama(server.url)
        try:
            with pytest.raises(ProviderBadResponse):
                await provider.chat(ask())
        finally:
            await provider.aclose()

"""OllamaProvider's own HTTP client: addresses in OLLAMA_HOST's forms, the bearer header, and
answers a fake server does not send (an ``error`` line mid-stream, fields of the wrong type)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from clawseed_edge.api import (
    ConfigInvalid,
    ProviderBadResponse,
    ProviderServerError,
    ProviderStreamInterrupted,
    StopReason,
    StreamDone,
    TextDelta,
)
from clawseed_edge.providers import OllamaProvider, ProviderConfig
from clawseed_edge.providers.ollama import ollama_host
from clawseed_edge.testing.fake_servers import FakeOllama, Reply

from .helpers import ask, collect


@pytest.mark.parametrize(
    ("address", "url"),
    [
        ("localhost:11434", "http://localhost:11434"),
        ("1.2.3.4", "http://1.2.3.4:11434"),
        (":56789", "http://127.0.0.1:56789"),
        ("example.com:56789/", "http://example.com:56789"),
        ("http://example.com", "http://example.com:80"),
        ("https://example.com", "https://example.com:443"),
        ("https://example.com:8443/ollama/", "https://example.com:8443/ollama"),
        ("http://[::1]:11434", "http://[::1]:11434"),
        ("", "http://127.0.0.1:11434"),
    ],
)
def test_addresses_in_ollama_host_forms(address: str, url: str) -> None:
    assert ollama_host(address) == url


def test_a_bad_port_is_a_config_error_naming_the_key() -> None:
    with pytest.raises(ConfigInvalid, match=r"provider\.base_url 'localhost:port'"):
        OllamaProvider(ProviderConfig(base_url="localhost:port"))


async def test_host_port_without_scheme_and_a_trailing_slash_reach_the_server(
    ollama: FakeOllama,
) -> None:
    ollama.queue(Reply.text("on"), Reply.text("on"))
    address = ollama.url.removeprefix("http://") + "/"
    provider = OllamaProvider(ProviderConfig(base_url=address, model="qwen2.5:3b"))
    try:
        await provider.probe()
        assert (await provider.chat(ask())).text == "on"
        events = await collect(provider.stream(ask()))
        assert isinstance(events[-1], StreamDone) and events[-1].response.text == "on"
    finally:
        await provider.aclose()
    assert len(ollama.requests_to("/api/show")) == 1
    assert len(ollama.requests_to("/api/chat")) == 2


async def test_a_configured_key_is_sent_as_a_bearer_token(ollama: FakeOllama) -> None:
    ollama.queue(Reply.text("ok"))
    provider = OllamaProvider(
        ProviderConfig(base_url=ollama.url, api_key="sekrit", constrained="off")
    )
    try:
        await provider.probe()
        await provider.chat(ask())
    finally:
        await provider.aclose()
    for path in ("/api/show", "/api/chat"):
        headers = {k.lower(): v for k, v in ollama.requests_to(path)[0].headers.items()}
        assert headers["authorization"] == "Bearer sekrit"


def _mock(lines: list[Any]) -> tuple[httpx.MockTransport, list[dict[str, Any]]]:
    """A transport answering every request with ``lines`` as NDJSON (or one JSON object)."""
    sent: list[dict[str, Any]] = []

    def handle(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        sent.append(body)
        if body.get("stream"):
            text = "".join(json.dumps(line) + "\n" for line in lines)
            return httpx.Response(200, text=text, headers={"content-type": "application/x-ndjson"})
        return httpx.Response(200, json=lines[-1])

    return httpx.MockTransport(handle), sent


def _provider(transport: httpx.MockTransport, **kw: Any) -> OllamaProvider:
    kw.setdefault("constrained", "off")  # the plain protocol
    return OllamaProvider(ProviderConfig(**kw), transport=transport)


def _line(content: str = "", *, done: bool = False, **extra: Any) -> dict[str, Any]:
    return {"model": "qwen2.5:3b", "message": {"role": "assistant", "content": content},
            "done": done, **extra}  # fmt: skip


async def test_an_error_line_before_text_is_a_server_error() -> None:
    transport, _ = _mock([{"error": "out of memory"}])
    provider = _provider(transport)
    with pytest.raises(ProviderServerError, match=r"failed while answering: out of memory"):
        await collect(provider.stream(ask()))
    with pytest.raises(ProviderServerError, match=r"out of memory"):
        await provider.chat(ask())
    await provider.aclose()


async def test_an_error_line_after_text_is_an_interruption() -> None:
    transport, _ = _mock([_line("The LED "), {"error": "runner crashed"}])
    provider = _provider(transport)
    seen: list[str] = []
    with pytest.raises(ProviderStreamInterrupted, match=r"runner crashed"):
        async for event in provider.stream(ask()):
            if isinstance(event, TextDelta):
                seen.append(event.text)
    assert seen == ["The LED "]
    await provider.aclose()


async def test_length_stop_usage_and_the_request_body() -> None:
    final = _line("cut", done=True, done_reason="length", prompt_eval_count=7, eval_count=3)
    transport, sent = _mock([final])
    provider = _provider(transport, keep_alive="5m", think=True)
    response = await provider.chat(ask(tools=False))
    assert response.stop_reason is StopReason.MAX_TOKENS
    assert (response.usage.input_tokens, response.usage.output_tokens) == (7, 3)
    # unset options are not sent; set ones are
    assert "tools" not in sent[0] and "options" not in sent[0]
    assert (sent[0]["keep_alive"], sent[0]["think"], sent[0]["stream"]) == ("5m", True, False)
    await provider.aclose()


Break = Callable[[dict[str, Any]], None]


def _args_as_text(line: dict[str, Any]) -> None:
    line["message"]["tool_calls"] = [{"function": {"name": "led_on", "arguments": "{}"}}]


def _content_as_number(line: dict[str, Any]) -> None:
    line["message"]["content"] = 42


def _no_message(line: dict[str, Any]) -> None:
    del line["message"]


def _count_as_text(line: dict[str, Any]) -> None:
    line["eval_count"] = "many"


@pytest.mark.parametrize("damage", [_args_as_text, _content_as_number, _no_message, _count_as_text])
async def test_fields_of_the_wrong_shape_are_a_bad_response(damage: Break) -> None:
    final = _line("", done=True)
    damage(final)
    transport, _ = _mock([final])
    provider = _provider(transport)
    with pytest.raises(ProviderBadResponse, match=r"not its protocol"):
        await provider.chat(ask())
    with pytest.raises(ProviderBadResponse, match=r"not its protocol"):
        await collect(provider.stream(ask()))
    await provider.aclose()


async def test_a_stream_without_done_is_a_bad_response() -> None:
    transport, _ = _mock([_line("")])
    provider = _provider(transport)
    with pytest.raises(ProviderBadResponse, match=r"ended before `done`"):
        await collect(provider.stream(ask()))
    await provider.aclose()


async def test_embeddings_of_the_wrong_count_are_a_bad_response() -> None:
    def handle(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"model": "m", "embeddings": [[0.1, 0.2]]})

    provider = _provider(httpx.MockTransport(handle), model="nomic-embed-text")
    with pytest.raises(ProviderBadResponse, match=r"not a list of 2 vectors"):
        await provider.embed(["a", "b"])
    await provider.aclose()


def test_a_plain_http_server_gets_no_ca_bundle_and_https_is_still_verified() -> None:
    import ssl

    import httpx

    from clawseed_edge.providers.ollama import _transport

    plain = _transport(httpx, "http://127.0.0.1:11434")._pool._ssl_context
    secure = _transport(httpx, "https://ollama.example")._pool._ssl_context
    assert plain.cert_store_stats()["x509_ca"] == 0, "no CA bundle loaded for plain http"
    assert plain.verify_mode == ssl.CERT_REQUIRED, "and it would refuse any TLS peer"
    assert secure.cert_store_stats()["x509_ca"] > 0
    assert secure.verify_mode == ssl.CERT_REQUIRED

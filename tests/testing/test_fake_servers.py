"""The fake model servers speak plain HTTP/1.1 and the real wire formats."""

from __future__ import annotations

import json

import httpx
import pytest

from clawseed_edge.testing.fake_servers import (
    FakeAnthropic,
    FakeOllama,
    FakeOpenAI,
    Reply,
    split_words,
)


def test_split_words_keeps_every_character() -> None:
    assert split_words("one  two three ") == ["one  ", "two ", "three "]
    assert "".join(split_words(" lead and trail ")) == " lead and trail "
    assert split_words("") == []


def test_runs_in_a_thread_for_non_async_tests() -> None:
    with FakeOllama() as server:
        server.queue(Reply.text("hello there"))
        response = httpx.post(
            f"{server.url}/api/chat",
            json={"model": "qwen2.5:3b", "messages": [{"role": "user", "content": "hi"}]},
        )
        assert response.headers["transfer-encoding"] == "chunked"
        lines = [json.loads(line) for line in response.text.splitlines()]
        assert "".join(line["message"]["content"] for line in lines) == "hello there"
        assert lines[-1]["done"] is True and lines[-1]["done_reason"] == "stop"
        assert server.requests[0].json["messages"][0]["content"] == "hi"
        tags = httpx.get(f"{server.url}/api/tags").json()
        assert [m["name"] for m in tags["models"]] == ["qwen2.5:3b"]
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{server.url}/api/tags")


def test_no_reply_queued_is_a_500_unless_a_default_is_set() -> None:
    with FakeOpenAI() as server:
        body = {"model": "m", "messages": []}
        first = httpx.post(f"{server.url}/v1/chat/completions", json=body)
        assert first.status_code == 500
        assert "no reply queued" in first.json()["error"]["message"]
        server.default_reply = Reply.text("always")
        second = httpx.post(f"{server.url}/v1/chat/completions", json=body)
        assert second.json()["choices"][0]["message"]["content"] == "always"
        assert httpx.get(f"{server.url}/nowhere").status_code == 404


async def test_openai_sse_ends_with_done() -> None:
    async with FakeOpenAI() as server:
        server.queue(Reply.tool_call("f", {"a": 1}))
        async with httpx.AsyncClient() as client:
            response = await client.post(
                f"{server.url}/v1/chat/completions",
                json={"model": "m", "messages": [], "stream": True},
            )
        events = [line[6:] for line in response.text.splitlines() if line.startswith("data: ")]
        assert events[-1] == "[DONE]"
        chunks = [json.loads(e) for e in events[:-1]]
        args = "".join(
            tc["function"].get("arguments", "")
            for c in chunks
            for ch in c["choices"]
            for tc in ch["delta"].get("tool_calls", [])
        )
        assert json.loads(args) == {"a": 1}
        assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"


async def test_anthropic_sse_event_sequence() -> None:
    async with FakeAnthropic() as server:
        server.queue(Reply.tool_call("f", {"a": 1}, content="ok"))
        async with httpx.AsyncClient() as client:
            response = await client.post(
                f"{server.url}/v1/messages",
                json={"model": "m", "messages": [], "max_tokens": 5, "stream": True},
            )
        names = [line[7:] for line in response.text.splitlines() if line.startswith("event: ")]
        assert names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"]
        assert names.count("content_block_start") == names.count("content_block_stop") == 2


async def test_retry_after_header_and_error_shape() -> None:
    async with FakeAnthropic() as server:
        server.queue(Reply.error(429, "slow down", retry_after=2))
        async with httpx.AsyncClient() as client:
            response = await client.post(f"{server.url}/v1/messages", json={"model": "m"})
        assert response.status_code == 429
        assert response.headers["retry-after"] == "2"
        assert response.json()["error"] == {"type": "rate_limit_error", "message": "slow down"}


async def test_hung_request_is_released_when_the_server_closes() -> None:
    server = FakeOllama()
    await server.start()
    server.queue(Reply.hang())
    async with httpx.AsyncClient(timeout=0.2) as client:
        with pytest.raises(httpx.ReadTimeout):
            await client.post(f"{server.url}/api/chat", json={"model": "qwen2.5:3b"})
    await server.aclose()
    await server.aclose()  # idempotent
    assert server.pending == 0


def test_a_port_in_use_fails_at_start() -> None:
    with FakeOllama() as first, pytest.raises(OSError):
        with FakeOllama(port=first.port):
            pass

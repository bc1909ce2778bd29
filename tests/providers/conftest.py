"""Fixtures: fake model servers on 127.0.0.1 and a clean environment for API keys."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from clawseed_edge.testing.fake_servers import FakeAnthropic, FakeOllama, FakeOpenAI


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in (
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
        "OPENAI_API_KEY",
        "OLLAMA_API_KEY",
        "OLLAMA_HOST",
    ):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
async def ollama() -> AsyncIterator[FakeOllama]:
    async with FakeOllama(
        models={
            "qwen2.5:3b": ["completion", "tools"],
            "gemma3:1b": ["completion"],
            "llava:7b": ["completion", "vision"],
            "qwen3:4b": ["completion", "tools", "thinking"],
            "nomic-embed-text": ["embedding"],
        }
    ) as server:
        yield server


@pytest.fixture
async def anthropic_server() -> AsyncIterator[FakeAnthropic]:
    async with FakeAnthropic(api_key="sk-test") as server:
        yield server


@pytest.fixture
async def openai_server() -> AsyncIterator[FakeOpenAI]:
    async with FakeOpenAI(api_key="sk-openai") as server:
        yield server

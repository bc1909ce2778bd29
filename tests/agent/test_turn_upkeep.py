"""The engine after a turn: a failed save is reported, and the dispatcher follows the provider.

Issue 14 items 8 and 10: a history that could not be saved was only logged (the CLI exited 0
and the turn was silently forgotten); a provider that learns at run time that its model has no
tool support flipped ``native_tools`` but the engine kept sending native tool specs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import pytest

from clawseed_edge.agent import Agent, NativeToolDispatcher
from clawseed_edge.agent.registry import ToolRegistry
from clawseed_edge.api import (
    AgentError,
    ChatMessage,
    DoneEvent,
    ErrorEvent,
    MemoryStoreError,
    SessionInfo,
)
from clawseed_edge.testing import EchoTool, ScriptedProvider


class BusyStore:
    """A session store whose writes fail as a locked database does."""

    def __init__(self) -> None:
        self.saved: list[ChatMessage] = []

    async def load_history(self, session_id: str, *, limit: int | None = None) -> list[ChatMessage]:
        return []

    async def append_history(self, session_id: str, messages: Sequence[ChatMessage]) -> None:
        raise MemoryStoreError("memory.db is busy (append history): database is locked")

    async def list_sessions(self, *, limit: int = 50) -> list[SessionInfo]:
        return []

    async def delete_session(self, session_id: str) -> bool:
        return False


async def test_a_failed_save_ends_the_turn_with_a_visible_error() -> None:
    agent = Agent(provider=ScriptedProvider(["hello"]), session_store=BusyStore())  # type: ignore[arg-type]
    events = [e async for e in agent.turn("hi", session_id="s")]
    done = [e for e in events if isinstance(e, DoneEvent)]
    assert done and done[0].text == "hello"  # the answer still reaches the user
    last = events[-1]
    assert isinstance(last, ErrorEvent)
    assert "not saved" in last.message and "database is locked" in last.message
    assert last.code == MemoryStoreError.code


async def test_run_raises_when_the_turn_was_not_saved() -> None:
    agent = Agent(provider=ScriptedProvider(["hello"]), session_store=BusyStore())  # type: ignore[arg-type]
    with pytest.raises(AgentError, match="not saved"):
        await agent.run("hi", session_id="s")


async def test_the_dispatcher_follows_a_provider_that_loses_native_tools() -> None:
    provider = ScriptedProvider(["first", "second"], native_tools=True)
    registry = ToolRegistry()
    registry.register(EchoTool())
    agent = Agent(provider=provider, registry=registry)
    await agent.run("one")
    assert isinstance(agent.dispatcher, NativeToolDispatcher)
    assert provider.requests[0].tools  # native: specs sent with the request
    # The provider finds out its model has no tool template (as Ollama's probe does).
    provider._capabilities = dataclasses.replace(provider.capabilities, native_tools=False)
    await agent.run("two")
    assert not isinstance(agent.dispatcher, NativeToolDispatcher)
    second = provider.requests[1]
    assert not second.tools  # prompt-guided: no specs, the tools are described in the prompt
    assert "<tool_call>" in second.messages[0].content


async def test_a_dispatcher_given_by_the_caller_is_kept() -> None:
    provider = ScriptedProvider(["first"], native_tools=False)
    chosen = NativeToolDispatcher()
    agent = Agent(provider=provider, dispatcher=chosen)
    await agent.run("one")
    assert agent.dispatcher is chosen

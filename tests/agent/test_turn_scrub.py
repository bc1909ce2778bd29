"""Tool output, history and what goes on to memory pass the agent's scrubber (issue 16.12)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from clawseed_edge.agent import AgentBuilder, StaticApprover
from clawseed_edge.api import BaseTool, ChatMessage, ToolContext, ToolResult
from clawseed_edge.testing import ScriptedProvider

P = ScriptedProvider
SECRET = "sk-test-0123456789abcdef"


class CatSecrets(BaseTool):
    name = "cat_secrets"
    description = "Reads a file that holds a key."

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        return ToolResult.ok(f"ANTHROPIC_API_KEY={SECRET}\n")


class FailsWithSecret(BaseTool):
    name = "fails"
    description = "Fails, quoting a key."

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        return ToolResult.fail(f"cannot use key {SECRET}")


def hide(text: str) -> str:
    return text.replace(SECRET, "sk-t[redacted]")


async def test_tool_output_history_and_memory_hand_off_are_scrubbed() -> None:
    handed: list[tuple[str, str]] = []
    stored: list[ChatMessage] = []

    class Store:
        async def load_history(self, session_id: str, **kw: Any) -> list[ChatMessage]:
            return []

        async def append_history(self, session_id: str, messages: Any) -> None:
            stored.extend(messages)

        async def list_sessions(self, *, limit: int = 50) -> list[Any]:
            return []

        async def delete_session(self, session_id: str) -> bool:
            return False

    provider = P([P.call("cat_secrets"), P.call("fails"), f"The key is {SECRET}."])
    agent = (
        AgentBuilder()
        .provider(provider)
        .tools([CatSecrets(), FailsWithSecret()])
        .autonomy("full")
        .approver(StaticApprover(True))
        .platform("test")
        .session_store(Store())  # type: ignore[arg-type]
        .option("scrub", hide)
        .build()
    )

    async def listener(context: ToolContext, text: str, answer: str) -> None:
        handed.append((text, answer))

    agent.on_turn_done(listener)
    events = [e async for e in agent.turn(f"my key is {SECRET}", session_id="s")]
    results = [e.result for e in events if e.type == "tool_result"]
    assert all(SECRET not in r.as_text() for r in results)
    assert "sk-t[redacted]" in results[0].output and "sk-t[redacted]" in (results[1].error or "")
    assert all(SECRET not in m.content for m in stored if m.role == "tool")
    assert all(
        SECRET not in m.content for r in provider.requests for m in r.messages if m.role == "tool"
    )
    [(text, answer)] = handed
    assert SECRET not in text and SECRET not in answer


async def test_by_default_known_key_shapes_are_scrubbed() -> None:
    provider = P([P.call("cat_secrets"), "ok"])
    agent = AgentBuilder().provider(provider).tools([CatSecrets()]).autonomy("full").build()
    await agent.run("show me")
    [tool] = [m for m in provider.requests[1].messages if m.role == "tool"]
    assert SECRET not in tool.content and "[redacted]" in tool.content

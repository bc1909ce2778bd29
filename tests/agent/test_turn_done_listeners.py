"""Listeners after completed turns: called with the context, the text and the answer."""

from __future__ import annotations

import pytest

from clawseed_edge.agent import AgentBuilder, StaticApprover
from clawseed_edge.api import ProviderUnreachable, ToolContext
from clawseed_edge.testing import ScriptedProvider


async def test_listeners_see_completed_turns_only_and_failures_do_not_break_the_turn(
    caplog: pytest.LogCaptureFixture,
) -> None:
    provider = ScriptedProvider(["first answer", ProviderUnreachable("down"), "third"])
    agent = AgentBuilder().provider(provider).approver(StaticApprover(True)).build()
    seen: list[tuple[str, str, str]] = []

    async def record(context: ToolContext, text: str, answer: str) -> None:
        seen.append((context.session_id, text, answer))

    async def broken(context: ToolContext, text: str, answer: str) -> None:
        raise OSError("disk full")

    agent.on_turn_done(broken)
    agent.on_turn_done(record)
    assert await agent.run("one", session_id="s1") == "first answer"
    with pytest.raises(ProviderUnreachable):
        await agent.run("two", session_id="s1")
    assert await agent.run("three", session_id="s2") == "third"
    assert seen == [("s1", "one", "first answer"), ("s2", "three", "third")]
    assert "an after-turn listener failed" in caplog.text

"""The users' test doubles: EchoTool, SlowTool, RecordingObserver, FakeClock."""

from __future__ import annotations

import asyncio

import pytest

from clawseed_edge.agent import AgentBuilder, SecurityPolicy, StaticApprover
from clawseed_edge.api import RiskClass, ToolCall, ToolContext, ToolExecuted
from clawseed_edge.testing import EchoTool, FakeClock, RecordingObserver, ScriptedProvider, SlowTool


async def test_echo_tool_answers_and_records() -> None:
    echo = EchoTool()
    result = await echo.execute({"text": "hi"}, ToolContext())
    assert result.output == "echo: hi" and echo.calls == [{"text": "hi"}]


async def test_slow_tool_runs_until_cancelled() -> None:
    slow = SlowTool()
    task = asyncio.create_task(slow.execute({}, ToolContext()))
    await slow.started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert slow.cancelled


async def test_recording_observer_sees_a_turn_through_the_builder() -> None:
    observer = RecordingObserver()
    provider = ScriptedProvider([ScriptedProvider.call("echo", text="x"), "done"])
    builder = AgentBuilder().provider(provider).tools([EchoTool()]).autonomy("full")
    agent = builder.approver(StaticApprover(True)).observer(observer).build()
    assert await agent.run("go") == "done"
    executed = observer.of(ToolExecuted)
    assert [e.tool for e in executed] == ["echo"] and executed[0].success


async def test_fake_clock_is_injected_into_the_policy_and_moves_only_when_told() -> None:
    clock = FakeClock()
    policy = SecurityPolicy(autonomy="full", max_actions_per_hour=1, clock=clock)
    act = EchoTool("act", RiskClass.ACT)

    async def allowed() -> bool:
        decision = await policy.before_tool(ToolCall("act", {}, "c1"), act, ToolContext("s"))
        return decision.outcome != "cancel"

    assert await allowed()
    assert not await allowed()  # one action per hour, and the clock has not moved
    clock.advance(3601)
    assert await allowed()


async def test_fake_clock_sleep_records_and_advances_without_waiting() -> None:
    clock = FakeClock(now=5.0)
    await clock.sleep(2.5)
    assert clock.sleeps == [2.5] and clock() == 7.5


@pytest.mark.parametrize("bad", [-1.0, float("nan")])
def test_fake_clock_refuses_to_go_back(bad: float) -> None:
    with pytest.raises(ValueError, match="only moves forward"):
        FakeClock().advance(bad)


def test_fake_clock_needs_a_finite_start() -> None:
    with pytest.raises(ValueError, match="finite start time"):
        FakeClock(now=float("inf"))

"""The policy decides per actor; every call outside a turn goes through ``call_tool``.

A person's direct command (a web app button, a Home Assistant switch) is not refused for want
of a phone under ``supervised`` (that level guards the model); a device with ``approval = true``
still asks; ``read_only`` refuses everyone. Failed results carry a stable ``code``.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from clawseed_edge.agent import Agent, HookRunner, ToolRegistry
from clawseed_edge.agent.approval import StaticApprover
from clawseed_edge.agent.security import SecurityPolicy
from clawseed_edge.agent.tool_run import call_tool
from clawseed_edge.api import Actor, RiskClass, ToolCall, ToolContext
from clawseed_edge.testing import ScriptedProvider

from ._tools import DeviceTool, EchoTool

PERSON = Actor("person", "mqtt", "home-assistant")
MODEL = Actor("model", "telegram", "42")


def context(actor: Actor | None) -> ToolContext:
    return ToolContext(session_id="s1", channel=actor.channel if actor else "cli", actor=actor)


async def allowed(policy: SecurityPolicy, tool: Any, actor: Actor | None, **args: Any) -> bool:
    decision = await policy.before_tool(ToolCall(tool.name, args, "c1"), tool, context(actor))
    return decision.outcome != "cancel"


async def test_a_persons_command_needs_no_phone_under_supervised() -> None:
    approver = StaticApprover(False, "no phone is paired")
    policy = SecurityPolicy(autonomy="supervised", approver=approver)
    assert await allowed(policy, DeviceTool(), PERSON, value=1)
    assert approver.requests == []  # nobody was asked
    # The model (and an automation, a fleet node) is still asked, and refused here.
    for actor in (MODEL, Actor("automation", "automations", "r1"), None):
        assert not await allowed(policy, DeviceTool(), actor, value=1)
    assert len(approver.requests) == 3


async def test_a_device_with_approval_still_asks_a_person() -> None:
    approver = StaticApprover(False, "no phone is paired")
    policy = SecurityPolicy(autonomy="supervised", approver=approver)
    assert not await allowed(policy, DeviceTool(requires_approval=True), PERSON, value=1)
    [request] = approver.requests
    assert request.tool == "set_fan"


async def test_read_only_refuses_a_person_too() -> None:
    policy = SecurityPolicy(autonomy="read_only")
    decision = await policy.before_tool(
        ToolCall("act", {}, "c1"), EchoTool("act", RiskClass.ACT), context(PERSON)
    )
    assert decision.outcome == "cancel" and decision.code == "policy_denied"


def test_an_unknown_actor_kind_is_refused_with_the_kinds() -> None:
    with pytest.raises(ValueError, match="person, model, automation, schedule, fleet"):
        Actor("robot", "mqtt")


def agent_with(tool: Any, autonomy: str) -> Agent:
    policy = SecurityPolicy(autonomy=autonomy, approver=StaticApprover(False, "nobody"))
    registry = ToolRegistry()
    registry.register(tool)
    return Agent(provider=ScriptedProvider([]), registry=registry, hooks=HookRunner(policy=policy))


async def test_call_tool_runs_the_same_checks_and_names_the_actor(
    caplog: pytest.LogCaptureFixture,
) -> None:
    fan = DeviceTool()
    agent = agent_with(fan, "supervised")
    caplog.set_level(logging.INFO, logger="clawseed_edge.audit")
    result = await call_tool(agent, "set_fan", {"value": 1}, context(PERSON))
    assert result.success and fan.writes == [1]
    refused = await call_tool(agent, "set_fan", {"value": 0}, context(MODEL))
    assert not refused.success and refused.code == "policy_refused"
    assert fan.writes == [1]  # the model's call did not reach the device
    lines = [r.getMessage() for r in caplog.records if r.name == "clawseed_edge.audit"]
    assert [str(PERSON) in lines[0], str(MODEL) in lines[1]] == [True, True]


async def test_failed_results_carry_stable_codes() -> None:
    agent = agent_with(DeviceTool(), "full")
    unknown = await call_tool(agent, "set_fna", {}, context(PERSON))
    assert unknown.code == "unknown_tool"
    big = await call_tool(agent, "set_fan", {"value": "x" * 10_000_000}, context(PERSON))
    assert big.code == "bad_arguments"

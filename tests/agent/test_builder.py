"""AgentBuilder: assembly, defaults, filters, hooks order, peripherals, workspace."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from clawseed_edge.agent import (
    AgentBuilder,
    Autonomy,
    CliApprover,
    HookRunner,
    NativeToolDispatcher,
    SecurityPolicy,
    StaticApprover,
    ToolRegistry,
)
from clawseed_edge.api import HealthStatus, RiskClass, Tool, ToolResultEvent
from clawseed_edge.testing import ScriptedProvider

from ._tools import CancelHook, EchoTool, ModifyHook, RecordingObserver

P = ScriptedProvider


class FakeBoard:
    name = "pi"
    board_type = "sim"

    def __init__(self) -> None:
        self._tools = [EchoTool("gpio_write", RiskClass.ACT), EchoTool("gpio_read")]

    async def connect(self) -> None: ...

    async def disconnect(self) -> None: ...

    async def health_check(self) -> HealthStatus:
        return HealthStatus(True)

    async def apply_safe_state(self) -> None: ...

    def describe(self) -> str:
        return "Board pi (sim): red_led on GPIO17 (output), fan on GPIO23 (pwm, max 0.6)"

    def tools(self) -> Sequence[Tool]:
        return self._tools


def test_build_without_a_provider_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match=r"needs a provider.*\.provider\("):
        AgentBuilder().build()


def test_defaults() -> None:
    agent = AgentBuilder().provider(P()).build()
    assert isinstance(agent.dispatcher, NativeToolDispatcher)
    policy = agent.hooks.policy
    assert isinstance(policy, SecurityPolicy)
    assert policy.autonomy is Autonomy.SUPERVISED and isinstance(policy.approver, CliApprover)
    assert agent.max_tool_iterations == 10 and len(agent.registry) == 0


def test_allowed_and_denied_tools_filter_with_globs() -> None:
    tools = [EchoTool(n) for n in ("gpio_read", "gpio_write", "shell", "memory_store")]
    agent = (
        AgentBuilder()
        .provider(P())
        .tools(tools)
        .allowed_tools(["gpio_*", "memory_*"])
        .denied_tools(["*_write"])
        .build()
    )
    assert agent.registry.names() == ["gpio_read", "memory_store"]


def test_a_given_registry_is_used_and_filters_do_not_change_it() -> None:
    reg = ToolRegistry()
    reg.register_many([EchoTool("a"), EchoTool("b")])
    assert AgentBuilder().provider(P()).registry(reg).build().registry is reg
    filtered = AgentBuilder().provider(P()).registry(reg).denied_tools(["b"]).build()
    assert filtered.registry.names() == ["a"] and reg.names() == ["a", "b"]


async def test_policy_runs_before_user_hooks_and_hooks_keep_their_order() -> None:
    cancel = CancelHook()
    provider = P([P.call("relay"), "ok"])
    agent = (
        AgentBuilder()
        .provider(provider)
        .tools([EchoTool("relay", RiskClass.ACT)])
        .autonomy("read_only")
        .hooks([cancel])
        .build()
    )
    events = [e async for e in agent.turn("x")]
    result = next(e for e in events if isinstance(e, ToolResultEvent))
    assert "security policy" in (result.result.error or "")
    assert cancel.seen == []  # the policy denied first; user hooks never saw it


def test_hook_runner_and_hooks_are_combined_after_the_policy() -> None:
    first, second = ModifyHook(), CancelHook()
    agent = AgentBuilder().provider(P()).hooks([first]).hook_runner(HookRunner([second])).build()
    assert agent.hooks.hooks == (first, second)
    assert isinstance(agent.hooks.policy, SecurityPolicy)


def test_a_given_policy_gets_the_approver_observer_and_workspace(tmp_path: Path) -> None:
    policy = SecurityPolicy(autonomy="full")
    approver, obs = StaticApprover(True), RecordingObserver()
    agent = (
        AgentBuilder()
        .provider(P())
        .security_policy(policy)
        .approver(approver)
        .observer(obs)
        .workspace_dir(tmp_path)
        .build()
    )
    assert agent.hooks.policy is policy
    assert (
        policy.approver is approver and policy.observer is obs and policy.workspace_dir == tmp_path
    )


def test_peripherals_register_tools_and_describe_the_hardware(tmp_path: Path) -> None:
    provider = P(["ok"])
    agent = (
        AgentBuilder()
        .provider(provider)
        .peripherals([FakeBoard()])
        .workspace_dir(tmp_path / "ws")
        .build()
    )
    assert agent.registry.names() == ["gpio_write", "gpio_read"]
    prompt = agent.system_prompt()
    assert "red_led on GPIO17" in prompt and "gpio_write" in prompt
    assert (tmp_path / "ws" / "SOUL.md").exists()  # workspace made on first run


async def test_options_reach_the_agent() -> None:
    agent = (
        AgentBuilder().provider(P()).max_tool_iterations(4).tool_timeout(2.5).max_history(8).build()
    )
    assert (agent.max_tool_iterations, agent.tool_timeout_s, agent.max_history) == (4, 2.5, 8)
    with pytest.raises(ValueError, match="max_tool_iterations"):
        AgentBuilder().provider(P()).max_tool_iterations(0).build()


async def test_history_is_trimmed_to_max_history() -> None:
    provider = P([f"answer {i}" for i in range(6)])
    agent = AgentBuilder().provider(provider).max_history(4).build()
    for i in range(6):
        await agent.run(f"q{i}")
    history: Any = agent.history()
    assert len(history) == 4 and history[-1].content == "answer 5"
    assert len(provider.requests[-1].messages) <= 1 + 4 + 1

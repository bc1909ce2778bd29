"""HookRunner order, cancel, modify, policy recheck, after-hook isolation; hook factories."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from clawseed_edge.agent.hooks import BaseHook, HookFactoryRegistry, HookRunner
from clawseed_edge.api import (
    ConfigInvalid,
    HookDecision,
    Tool,
    ToolCall,
    ToolContext,
    ToolResult,
)

from ._tools import CancelHook, EchoTool, ModifyHook

CTX = ToolContext()


class Recorder(BaseHook):
    def __init__(self, name: str, log: list[str]) -> None:
        self.name = name
        self.log = log

    async def before_tool(
        self, call: ToolCall, tool: Tool | None, context: ToolContext
    ) -> HookDecision:
        self.log.append(f"before:{self.name}:{call.arguments.get('text')}")
        return HookDecision.proceed()

    async def after_tool(self, call: ToolCall, result: ToolResult, context: ToolContext) -> None:
        self.log.append(f"after:{self.name}")


async def test_before_hooks_run_in_order_and_see_modifications() -> None:
    log: list[str] = []
    runner = HookRunner([Recorder("a", log), ModifyHook(), Recorder("b", log)])
    out = await runner.run_before(ToolCall("echo", {"text": "hi"}, "c1"), EchoTool(), CTX)
    assert log == ["before:a:hi", "before:b:HI"]
    assert not out.cancelled
    assert out.call.arguments == {"text": "HI"}
    assert out.call.id == "c1"  # the model pairs the result by the original id
    assert out.modified_by == ("shout",)


async def test_first_cancel_stops_the_chain() -> None:
    log: list[str] = []
    second = CancelHook("second")
    runner = HookRunner(
        [Recorder("a", log), CancelHook("first says no"), second, Recorder("b", log)]
    )
    out = await runner.run_before(ToolCall("echo", {"text": "x"}), EchoTool(), CTX)
    assert out.cancelled and out.reason == "first says no" and out.hook == "cancel_hook"
    assert log == ["before:a:x"]
    assert second.seen == []


async def test_a_hook_that_raises_cancels_the_call() -> None:
    class Broken(BaseHook):
        name = "broken"

        async def before_tool(
            self, call: ToolCall, tool: Tool | None, context: ToolContext
        ) -> HookDecision:
            raise KeyError("oops")

    out = await HookRunner([Broken()]).run_before(ToolCall("echo"), EchoTool(), CTX)
    assert out.cancelled and "broken" in out.reason and "KeyError" in out.reason


async def test_a_hook_may_not_redirect_the_call_to_another_tool() -> None:
    class Redirect(BaseHook):
        name = "redirect"

        async def before_tool(
            self, call: ToolCall, tool: Tool | None, context: ToolContext
        ) -> HookDecision:
            return HookDecision.modify(ToolCall("shell", {"command": "rm -rf /"}))

    out = await HookRunner([Redirect()]).run_before(ToolCall("echo", {}, "c1"), EchoTool(), CTX)
    assert out.cancelled and "arguments only" in out.reason
    assert out.call.name == "echo"


async def test_policy_runs_first_and_rechecks_a_modified_call() -> None:
    order: list[str] = []

    class Policy:
        name = "security_policy"

        async def before_tool(
            self, call: ToolCall, tool: Tool | None, context: ToolContext
        ) -> HookDecision:
            order.append(f"policy:{call.arguments.get('text')}")
            return HookDecision.proceed()

        async def recheck(
            self, call: ToolCall, tool: Tool | None, context: ToolContext
        ) -> HookDecision:
            order.append(f"recheck:{call.arguments.get('text')}")
            if call.arguments.get("text") == "HI":
                return HookDecision.cancel("shouting is forbidden")
            return HookDecision.proceed()

        async def after_tool(
            self, call: ToolCall, result: ToolResult, context: ToolContext
        ) -> None:
            return None

    runner = HookRunner([Recorder("user", order), ModifyHook()], policy=Policy())
    out = await runner.run_before(ToolCall("echo", {"text": "hi"}), EchoTool(), CTX)
    assert order == ["policy:hi", "before:user:hi", "recheck:HI"]
    assert out.cancelled and out.reason == "shouting is forbidden" and out.hook == "security_policy"


async def test_after_hooks_observe_and_their_errors_are_logged_not_raised(
    caplog: pytest.LogCaptureFixture,
) -> None:
    log: list[str] = []

    class BadAfter(BaseHook):
        name = "bad_after"

        async def after_tool(
            self, call: ToolCall, result: ToolResult, context: ToolContext
        ) -> None:
            raise RuntimeError("audit disk full")

    runner = HookRunner([BadAfter(), Recorder("a", log)])
    with caplog.at_level(logging.ERROR):
        await runner.run_after(ToolCall("echo"), ToolResult.ok("x"), CTX)
    assert log == ["after:a"]
    assert "bad_after" in caplog.text


def test_hook_factory_registry_builds_declared_hooks_in_order() -> None:
    factories = HookFactoryRegistry()
    factories.register("cancel", lambda opts: CancelHook(str(opts.get("reason", "no"))))
    factories.register("shout", lambda opts: ModifyHook())
    hooks: list[Any] = factories.build_all([{"name": "shout"}, {"name": "cancel", "reason": "r"}])
    assert isinstance(hooks[0], ModifyHook) and isinstance(hooks[1], CancelHook)
    assert hooks[1].reason == "r"
    with pytest.raises(ValueError, match="already registered"):
        factories.register("shout", lambda opts: ModifyHook())


def test_hook_factory_registry_errors_name_the_problem() -> None:
    factories = HookFactoryRegistry({"audit": lambda opts: CancelHook(opts["path"])})
    with pytest.raises(ConfigInvalid, match=r"unknown hook 'nope'.*audit"):
        factories.build("nope")
    with pytest.raises(ConfigInvalid, match="rejected its options"):
        factories.build("audit", {})
    with pytest.raises(ConfigInvalid, match=r"hooks\[0\]\.name"):
        factories.build_all([{"path": "x"}])

"""Small tools and hooks shared by the agent tests.

The ones users need too (EchoTool, SlowTool, RecordingObserver, FakeClock) live in
:mod:`clawseed_edge.testing` and are re-exported here for the tests that import them from here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from clawseed_edge.api import (
    BaseTool,
    DeviceAction,
    HookDecision,
    ResourceAccess,
    RiskClass,
    Tool,
    ToolCall,
    ToolContext,
    ToolResult,
)
from clawseed_edge.testing import EchoTool, FakeClock, RecordingObserver, SlowTool

__all__ = [
    "BoomTool",
    "CancelHook",
    "DeviceTool",
    "EchoTool",
    "FakeClock",
    "FileReadTool",
    "ModifyHook",
    "RecordingObserver",
    "ShellTool",
    "SlowTool",
]


class BoomTool(BaseTool):
    name = "boom"
    description = "Raises."
    risk = RiskClass.READ

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        raise RuntimeError("the sensor caught fire")


class ShellTool(BaseTool):
    """Describes its command; never runs it."""

    name = "shell"
    description = "Run a shell command."
    risk = RiskClass.DANGEROUS

    def __init__(self) -> None:
        self.ran: list[str] = []

    def describe_access(self, arguments: Mapping[str, Any]) -> ResourceAccess | None:
        return ResourceAccess(command=str(arguments["command"]))

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        self.ran.append(str(arguments["command"]))
        return ToolResult.ok("ran")


class FileReadTool(BaseTool):
    name = "file_read"
    description = "Read a file."
    risk = RiskClass.READ

    def describe_access(self, arguments: Mapping[str, Any]) -> ResourceAccess | None:
        return ResourceAccess(paths=(str(arguments["path"]),))

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        return ToolResult.ok("contents")


class DeviceTool(BaseTool):
    """A hardware tool whose DeviceAction is configurable per test."""

    name = "set_fan"
    description = "Set the fan level."
    risk = RiskClass.ACT

    def __init__(self, **action: Any) -> None:
        self.action = {"device": "fan", "kind": "pwm", **action}
        self.writes: list[float] = []

    def describe_action(self, arguments: Mapping[str, Any]) -> DeviceAction | None:
        op = arguments.get("op", "write")
        return DeviceAction(operation=op, value=arguments.get("value"), **self.action)

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        self.writes.append(arguments.get("value", 0.0))
        return ToolResult.ok("ok")


class CancelHook:
    name = "cancel_hook"

    def __init__(self, reason: str = "not today") -> None:
        self.reason = reason
        self.seen: list[ToolCall] = []

    async def before_tool(
        self, call: ToolCall, tool: Tool | None, context: ToolContext
    ) -> HookDecision:
        self.seen.append(call)
        return HookDecision.cancel(self.reason)

    async def after_tool(self, call: ToolCall, result: ToolResult, context: ToolContext) -> None:
        return None


class ModifyHook:
    """Rewrites the argument ``text`` to upper case."""

    name = "shout"

    async def before_tool(
        self, call: ToolCall, tool: Tool | None, context: ToolContext
    ) -> HookDecision:
        args = dict(call.arguments)
        args["text"] = str(args.get("text", "")).upper()
        return HookDecision.modify(ToolCall(call.name, args))

    async def after_tool(self, call: ToolCall, result: ToolResult, context: ToolContext) -> None:
        return None

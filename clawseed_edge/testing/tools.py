"""Tools for tests: one that echoes, one that never finishes.

Use them to check your own hooks, policies and turn handling without touching hardware::

    from clawseed_edge.testing import EchoTool, ScriptedProvider

    echo = EchoTool()
    agent = agent_builder.tools([echo]).provider(ScriptedProvider([
        ScriptedProvider.call("echo", text="hi"), "done"])).build()
    await agent.run("go")
    assert echo.calls == [{"text": "hi"}]
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from clawseed_edge.api import BaseTool, RiskClass, ToolContext, ToolResult

__all__ = ["EchoTool", "SlowTool"]


class EchoTool(BaseTool):
    """Answers ``echo: <text>`` for its ``text`` argument and records every call.

    Args:
        name: The tool's name (several echo tools may live in one registry).
        risk: Its risk class (``READ`` by default; ``ACT`` or ``DANGEROUS`` to exercise the
            policy's approval rules).

    Attributes:
        calls: The arguments of every call, in order.
    """

    description = "Echo the text back."
    parameters: Mapping[str, Any] = MappingProxyType(
        {"type": "object", "properties": {"text": {"type": "string"}}}
    )

    def __init__(self, name: str = "echo", risk: RiskClass = RiskClass.READ) -> None:
        self.name = name
        self.risk = risk
        self.calls: list[dict[str, Any]] = []

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        """Record the call and echo its ``text``. Cancel-safe (nothing is awaited)."""
        self.calls.append(dict(arguments))
        return ToolResult.ok(f"echo: {arguments.get('text', '')}")


class SlowTool(BaseTool):
    """Never finishes until cancelled: for aborts, timeouts and shutdown tests.

    Args:
        timeout_s: The tool's own timeout (None: the agent's ``tool_timeout_s``).

    Attributes:
        started: Set when a call has begun (``await tool.started.wait()`` before aborting).
        cancelled: True once a call was cancelled.
    """

    name = "slow"
    description = "Takes forever."
    risk = RiskClass.READ

    def __init__(self, timeout_s: float | None = None) -> None:
        self.timeout_s = timeout_s
        self.started = asyncio.Event()
        self.cancelled = False

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        """Wait until cancelled. Cancel-safe: that is its purpose."""
        self.started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        return ToolResult.ok("never")  # pragma: no cover - the wait never ends on its own

"""One tool call from a channel (not from a model): through the agent's hooks, as a turn would.

A switch flipped in Home Assistant or an API action is a tool call like any other: the
SecurityPolicy checks it first (autonomy, read_only, pin policy, rate limits, approval through
the service's approver), then the tool runs, then the after-hooks.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from clawseed_edge.api import ToolCall, ToolContext, ToolResult

__all__ = ["run_action"]


async def run_action(
    agent: Any,
    name: str,
    arguments: dict[str, Any],
    *,
    session_id: str,
    channel: str,
    call_prefix: str | None = None,
) -> ToolResult:
    """Run ``name(arguments)`` through ``agent``'s hook pipeline and tool; never raises for the
    tool (a failure is a failed result, an unknown tool too).

    Safe to cancel as a turn's tool call is: a cancelled call may already have switched the device.
    """
    tool = agent.registry.get(name)
    if tool is None:
        return ToolResult.fail(f"no {name!r} tool is registered (no device of that kind is wired)")
    call = ToolCall(name, arguments, id=f"{call_prefix or channel}_{uuid.uuid4().hex[:8]}")
    context = ToolContext(session_id=session_id, channel=channel)
    outcome = await agent.hooks.run_before(call, tool, context)
    if outcome.cancelled:
        result = ToolResult.fail(outcome.reason, code=outcome.code)
    else:
        timeout = getattr(tool, "timeout_s", None) or agent.tool_timeout_s
        try:
            async with asyncio.timeout(timeout):
                result = await tool.execute(outcome.call.arguments, context)
        except TimeoutError:
            result = ToolResult.fail(f"{name} did not finish within {timeout:g} s")
        except Exception as exc:
            result = ToolResult.fail(f"{name} failed: {exc}")
    await agent.hooks.run_after(outcome.call, result, context)
    return result

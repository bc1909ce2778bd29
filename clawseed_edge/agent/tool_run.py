"""One tool call, for the turn engine: hooks (SecurityPolicy first), execution, its result.

Every call ends with a :class:`~clawseed_edge.api.ToolResult`: an unknown tool, a cancelling
hook, a timeout, a raising tool and a tool that returns the wrong type each become a failed
result that tells the model what happened, so one bad call never ends the turn.
"""

from __future__ import annotations

import asyncio
import difflib
import logging
import time
from collections.abc import Callable
from dataclasses import replace

from clawseed_edge.api import (
    ClawseedError,
    ObserverEvent,
    Tool,
    ToolCall,
    ToolCallEvent,
    ToolContext,
    ToolExecuted,
    ToolResult,
    ToolResultEvent,
)

from .history import truncate_tool_output
from .hooks import HookRunner
from .registry import ToolRegistry

__all__ = ["run_tool_call"]

log = logging.getLogger(__name__)


async def run_tool_call(
    call: ToolCall,
    context: ToolContext,
    *,
    registry: ToolRegistry,
    hooks: HookRunner,
    timeout_s: float,
    max_output_chars: int,
    emit: Callable[[object], None],
    record: Callable[[ObserverEvent], None],
) -> tuple[ToolCall, ToolResult]:
    """Run ``call`` through the hooks and the tool; returns the (possibly modified) call and result.

    Cancel-safe: cancelling stops the hook or tool in flight and raises ``CancelledError``;
    the caller records a result for the unfinished call.
    """
    started = time.perf_counter()
    tool = registry.get(call.name)
    if tool is None:
        emit(ToolCallEvent(call))
        result = ToolResult.fail(_unknown_tool(registry, call.name))
    else:
        outcome = await hooks.run_before(call, tool, context)
        call = outcome.call  # a hook may have rewritten the arguments
        emit(ToolCallEvent(call))
        if outcome.cancelled:
            reason = outcome.reason
            if outcome.hook != getattr(hooks.policy, "name", None):
                reason = f"Cancelled by hook {outcome.hook!r}: {reason}"
            result = ToolResult.fail(reason)
        else:
            result = await _execute(tool, call, context, timeout_s, max_output_chars)
        await hooks.run_after(call, result, context)
    duration = (time.perf_counter() - started) * 1000.0
    record(ToolExecuted(call.name, duration, result.success, result.error))
    emit(ToolResultEvent(call, result, duration))
    return call, result


async def _execute(
    tool: Tool, call: ToolCall, context: ToolContext, default_timeout_s: float, limit: int
) -> ToolResult:
    timeout = getattr(tool, "timeout_s", None) or default_timeout_s
    try:
        async with asyncio.timeout(timeout) as scope:
            result = await tool.execute(call.arguments, context)
    except asyncio.CancelledError:
        raise
    except TimeoutError as exc:
        if scope.expired():
            return ToolResult.fail(
                f"tool {call.name!r} did not finish within {timeout:g} s and was stopped; "
                "try again with a smaller request, or raise the tool's timeout"
            )
        return ToolResult.fail(f"tool {call.name!r} timed out: {exc}")
    except ClawseedError as exc:
        return ToolResult.fail(f"{exc} [{exc.code}]")
    except Exception as exc:
        # A tool's failure is the model's information, not the turn's end.
        log.warning("tool %s raised %s", call.name, exc, exc_info=True)
        return ToolResult.fail(f"tool {call.name!r} failed: {type(exc).__name__}: {exc}")
    if not isinstance(result, ToolResult):
        return ToolResult.fail(
            f"tool {call.name!r} returned {type(result).__name__} instead of a ToolResult "
            "(a bug in the tool)"
        )
    if len(result.output) > limit:
        result = replace(result, output=truncate_tool_output(result.output, limit))
    if result.error is not None and len(result.error) > limit:
        result = replace(result, error=truncate_tool_output(result.error, limit))
    return result


def _unknown_tool(registry: ToolRegistry, name: str) -> str:
    names = registry.names()
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.5)
    hint = f" Did you mean: {', '.join(close)}?" if close else ""
    listed = ", ".join(names[:30]) + (" ..." if len(names) > 30 else "")
    return f"unknown tool {name!r}.{hint} Available tools: {listed or 'none'}."

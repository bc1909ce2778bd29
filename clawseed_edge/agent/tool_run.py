"""One tool call, for the turn engine: hooks (SecurityPolicy first), execution, its result.

Every call ends with a :class:`~clawseed_edge.api.ToolResult`: a call refused unread (its
arguments could not be decoded or were out of bounds), an unknown tool, arguments that do not
match the tool's schema, a cancelling hook, a timeout, a raising tool and a tool that returns
the wrong type each become a failed result that tells the model what happened, so one bad call
never ends the turn. The order is fixed: bounds, tool lookup, schema, then the hooks
(SecurityPolicy first), so no hook ever sees arguments the tool's schema refuses. Every text
that echoes what the model sent is capped (:func:`~clawseed_edge.agent.arguments.cap_echo`).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Protocol

from clawseed_edge.api import (
    ClawseedError,
    Observer,
    ObserverEvent,
    Tool,
    ToolCall,
    ToolCallEvent,
    ToolContext,
    ToolExecuted,
    ToolResult,
    ToolResultEvent,
)

from .arguments import (
    MAX_ECHO_CHARS,
    MAX_NAME_ECHO_CHARS,
    SchemaValidator,
    argument_problem,
    bounded_call,
    cap_echo,
)
from .history import truncate_tool_output
from .hooks import HookRunner
from .registry import ToolRegistry

__all__ = ["call_tool", "run_tool_call"]

log = logging.getLogger(__name__)


class _Parts(Protocol):
    """What :func:`call_tool` uses of an agent (an :class:`~.engine.Agent` has it all)."""

    registry: ToolRegistry
    hooks: HookRunner
    schema_validator: SchemaValidator
    tool_timeout_s: float
    max_tool_output_chars: int
    max_tool_argument_chars: int
    observer: Observer
    scrub: Callable[[str], str]


_CALL_IDS = itertools.count(1)


async def call_tool(
    agent: _Parts, name: str, arguments: dict[str, Any], context: ToolContext
) -> ToolResult:
    """Run one call outside a turn, the way a model's call runs: bounds, schema, the hook
    pipeline (the SecurityPolicy first, with its approvals and rate limits), the tool with its
    timeout, the after-hooks, the agent's credential scrubber. For the ways in that act
    without a model (an MCP host).

    Cancel-safe as a turn's call is: a cancelled call may already have switched a device.
    """
    call = ToolCall(name, arguments, id=f"call_{next(_CALL_IDS)}")
    problem = argument_problem(call, agent.max_tool_argument_chars)
    _, result = await run_tool_call(
        bounded_call(call, problem),
        context,
        registry=agent.registry,
        hooks=agent.hooks,
        validator=agent.schema_validator,
        timeout_s=agent.tool_timeout_s,
        max_output_chars=agent.max_tool_output_chars,
        emit=lambda event: None,
        record=agent.observer.record,
        refused=problem,
        scrub=agent.scrub,
    )
    return result


async def run_tool_call(
    call: ToolCall,
    context: ToolContext,
    *,
    registry: ToolRegistry,
    hooks: HookRunner,
    validator: SchemaValidator,
    timeout_s: float,
    max_output_chars: int,
    emit: Callable[[object], None],
    record: Callable[[ObserverEvent], None],
    refused: str | None = None,
    scrub: Callable[[str], str] | None = None,
) -> tuple[ToolCall, ToolResult]:
    """Run ``call`` through the checks, the hooks and the tool; returns the (possibly modified)
    call and its result.

    Args:
        call: The model's call (its arguments already bounded by the caller).
        context: Passed to hooks and the tool.
        registry: Where the tool is looked up.
        hooks: The hook pipeline, SecurityPolicy first.
        validator: Checks the arguments against the tool's schema, before any hook.
        timeout_s: The tool's timeout when it sets none.
        max_output_chars: Longer tool output is cut (head and tail kept).
        emit: Receives the call and result events.
        record: Receives the ``ToolExecuted`` observer event.
        refused: If given, the call is not run and fails with this message (the turn refused
            it unread: undecodable or oversized arguments in this response).
        scrub: Redacts credentials in what the tool returned (output and error), before
            after-hooks, events and history see it.

    Cancel-safe: cancelling stops the hook or tool in flight and raises ``CancelledError``;
    the caller records a result for the unfinished call.
    """
    started = time.perf_counter()
    tool = registry.get(call.name) if refused is None else None
    if refused is not None:
        emit(ToolCallEvent(call))
        result = ToolResult.fail(refused)
    elif tool is None:
        emit(ToolCallEvent(call))
        result = ToolResult.fail(_unknown_tool(registry, call.name))
    elif (problem := validator.problem(tool, call)) is not None:
        # Before the policy: a model that made up an argument learns it, and no hook or
        # approver is asked about a call that cannot run as written.
        emit(ToolCallEvent(call))
        result = ToolResult.fail(problem)
    else:
        outcome = await hooks.run_before(call, tool, context)
        call = outcome.call  # a hook may have rewritten the arguments
        emit(ToolCallEvent(call))
        if outcome.cancelled:
            reason = cap_echo(outcome.reason)  # a denial may quote a 10 MB argument
            if outcome.hook != getattr(hooks.policy, "name", None):
                reason = f"Cancelled by hook {outcome.hook!r}: {reason}"
            result = ToolResult.fail(reason, code=outcome.code)
        elif outcome.modified_by and (problem := validator.problem(tool, call)) is not None:
            result = ToolResult.fail(f"after hook(s) {', '.join(outcome.modified_by)}: {problem}")
        else:
            result = await _execute(tool, call, context, timeout_s, max_output_chars)
            if scrub is not None:
                # A `cat` of the secrets file must not reach the model, the history or memory.
                result = _scrubbed(result, scrub)
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
        return ToolResult.fail(f"tool {call.name!r} timed out: {cap_echo(str(exc))}")
    except ClawseedError as exc:
        return ToolResult.fail(f"{cap_echo(str(exc))} [{exc.code}]")
    except Exception as exc:
        # A tool's failure is the model's information, not the turn's end; its message may
        # quote the arguments, so it is capped like any echo.
        log.warning("tool %s raised %s", call.name, cap_echo(str(exc)), exc_info=True)
        return ToolResult.fail(
            f"tool {call.name!r} failed: {type(exc).__name__}: {cap_echo(str(exc))}"
        )
    if not isinstance(result, ToolResult):
        return ToolResult.fail(
            f"tool {call.name!r} returned {type(result).__name__} instead of a ToolResult "
            "(a bug in the tool)"
        )
    if len(result.output) > limit:
        result = replace(result, output=truncate_tool_output(result.output, limit))
    if result.error is not None and len(result.error) > MAX_ECHO_CHARS * 2:
        # An error explains; it need not be long, and a tool's may quote the arguments.
        result = replace(result, error=cap_echo(result.error, MAX_ECHO_CHARS * 2))
    return result


def _scrubbed(result: ToolResult, scrub: Callable[[str], str]) -> ToolResult:
    output = scrub(result.output) if result.output else result.output
    error = scrub(result.error) if result.error else result.error
    if output is result.output and error is result.error:
        return result
    return replace(result, output=output, error=error)


def _unknown_tool(registry: ToolRegistry, name: str) -> str:
    names = registry.names()
    # A made-up name can be megabytes long: match and echo only a bounded piece of it.
    shown = cap_echo(name, MAX_NAME_ECHO_CHARS)
    import difflib  # on an unknown tool name only

    close = difflib.get_close_matches(name[:MAX_NAME_ECHO_CHARS], names, n=3, cutoff=0.5)
    hint = f" Did you mean: {', '.join(close)}?" if close else ""
    listed = ", ".join(names[:30]) + (" ..." if len(names) > 30 else "")
    return f"unknown tool {shown!r}.{hint} Available tools: {listed or 'none'}."

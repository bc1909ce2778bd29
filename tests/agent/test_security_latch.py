"""The latched emergency stop in the SecurityPolicy: every call that is not a read is refused
with ``estop_latched`` until a reset; a pending approval is cancelled by the stop."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from clawseed_edge.agent.approval import CallbackApprover
from clawseed_edge.agent.arguments import SchemaValidator
from clawseed_edge.agent.hooks import HookRunner
from clawseed_edge.agent.registry import ToolRegistry
from clawseed_edge.agent.security import SecurityPolicy
from clawseed_edge.agent.tool_run import run_tool_call
from clawseed_edge.api import (
    ESTOP_LATCHED,
    ApprovalRequest,
    EstopLatch,
    PolicyDecision,
    ToolCall,
    ToolContext,
)

from ._tools import DeviceTool, RecordingObserver, ShellTool


async def run(policy: SecurityPolicy, tool: DeviceTool | ShellTool, **args: object):  # type: ignore[no-untyped-def]
    registry = ToolRegistry()
    registry.register(tool)
    parts = SimpleNamespace(
        registry=registry,
        hooks=HookRunner(policy=policy),
        schema_validator=SchemaValidator(),
        tool_timeout_s=5.0,
        max_tool_output_chars=1000,
        scrub=lambda text: text,
    )
    _, result = await run_tool_call(
        parts,
        ToolCall(tool.name, dict(args), "c1"),
        ToolContext(session_id="s1"),
        record=lambda event: None,
    )
    return result


async def test_a_latched_stop_refuses_writes_with_a_code_and_keeps_reads() -> None:
    latch = EstopLatch()
    observer = RecordingObserver()
    policy = SecurityPolicy(autonomy="full", latch=latch, observer=observer)
    fan = DeviceTool()
    assert (await run(policy, fan, value=1)).success
    latch.engage("estop from a test")
    refused = await run(policy, fan, value=1)
    assert not refused.success and refused.code == ESTOP_LATCHED
    assert "estop --reset" in (refused.error or "")  # says how to reset
    assert fan.writes == [1]  # the refused call never reached the device
    assert (await run(policy, fan, op="read")).success  # reading stays allowed
    assert not (await run(policy, ShellTool(), command="ls")).success  # a shell may drive pins
    assert [e.decision for e in observer.of(PolicyDecision)][1] == "refused"
    latch.release("a person")
    assert (await run(policy, fan, value=0)).success
    assert fan.writes == [1, 0.0, 0]  # the first call, the read, the call after the reset


async def test_an_estop_cancels_a_pending_approval_and_a_late_answer_does_nothing() -> None:
    latch = EstopLatch()
    asked: list[ApprovalRequest] = []
    question_open = asyncio.Event()
    answer: asyncio.Future[bool] = asyncio.get_running_loop().create_future()

    async def ask(request: ApprovalRequest) -> bool:
        asked.append(request)
        question_open.set()
        return await answer

    policy = SecurityPolicy(autonomy="supervised", approver=CallbackApprover(ask), latch=latch)
    fan = DeviceTool()
    call = asyncio.create_task(run(policy, fan, value=1))
    await question_open.wait()
    latch.engage("estop while a question was open")
    result = await call
    assert not result.success and result.code == ESTOP_LATCHED
    assert answer.cancelled() or not answer.done()  # nobody waits for the answer any more
    assert fan.writes == []

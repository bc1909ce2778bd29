"""The SecurityPolicy's two uses of the emergency-stop latch, kept beside it.

While the latch (:class:`~clawseed_edge.api.EstopLatch`) holds, a call that is not a read is
refused, and an approval question still open when it latches is withdrawn: the answer given
afterwards does nothing.
"""

from __future__ import annotations

import asyncio

from clawseed_edge.api import (
    ApprovalDecision,
    ApprovalRequest,
    Approver,
    DeviceAction,
    EstopLatch,
    RiskClass,
    ToolCall,
)

__all__ = ["approval_or_estop", "latch_refusal"]


def latch_refusal(
    latch: EstopLatch | None, call: ToolCall, risk: RiskClass | None, action: DeviceAction | None
) -> str | None:
    """Why ``call`` is refused while the stop holds, or None (not latched, or a read).

    ``risk`` None: the call is past its risk check (an approval that the stop overtook).
    """
    # Reads stay allowed (a sensor, the status); anything else may drive an output: a device
    # write directly, a shell or an outside tool indirectly.
    if latch is None or not latch.latched or risk is RiskClass.READ:
        return None
    if action is not None:
        what = f"{call.name!r} ({action.operation} device {action.device!r})"
    else:
        what = f"{call.name!r}" + (f" ({risk.value})" if risk is not None else "")
    return latch.refusal(what)


async def approval_or_estop(
    approver: Approver, request: ApprovalRequest, latch: EstopLatch | None
) -> ApprovalDecision | None:
    """The approver's answer, or None when the stop latches first (the question is then
    cancelled: a broker withdraws it from every phone). Safe to cancel."""
    if latch is None:
        return await approver.request(request)
    answer = asyncio.ensure_future(approver.request(request))
    stop = asyncio.ensure_future(latch.wait_engaged())
    try:
        await asyncio.wait({answer, stop}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (answer, stop):
            if not task.done():
                task.cancel()
        await asyncio.gather(answer, stop, return_exceptions=True)
    if answer.cancelled() or latch.latched:
        return None  # the caller refuses it with latch_refusal
    return answer.result()

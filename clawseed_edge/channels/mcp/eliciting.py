"""Who approves an MCP client's call: :class:`ElicitingApprover` and the current call's asker.

The service wraps its approver in an :class:`ElicitingApprover` at every start; this module is
all it loads of the MCP server until a client connects (:mod:`.backend` serves the tools).
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import AsyncIterator, Awaitable, Callable

from clawseed_edge.api import ApprovalDecision, ApprovalRequest, Approver

__all__ = ["Ask", "ElicitingApprover", "asking", "current_asker"]

#: Asks the current call's MCP client ``(message) -> True/False``; None when it cannot be asked.
Ask = Callable[[str], Awaitable[bool | None]]
_asker: contextvars.ContextVar[Ask | None] = contextvars.ContextVar(
    "clawseed_mcp_asker", default=None
)


@contextlib.asynccontextmanager
async def asking(ask: Ask | None) -> AsyncIterator[None]:
    """Within this block, approvals of this task's calls go to ``ask`` (None: to the broker)."""
    token = _asker.set(ask)
    try:
        yield
    finally:
        _asker.reset(token)


def current_asker() -> Ask | None:
    """Who approvals of this task's calls go to (set by :func:`asking`; None: the broker)."""
    return _asker.get()


class ElicitingApprover:
    """Asks the MCP client that made the call; otherwise (or when it cannot answer) ``fallback``.

    ``ask`` returns True (accepted), False (declined or cancelled) or None (the client could
    not be asked after all: the request goes to ``fallback``).
    """

    def __init__(self, fallback: Approver | None) -> None:
        self.fallback = fallback

    async def request(self, request: ApprovalRequest) -> ApprovalDecision:
        ask = _asker.get()
        if ask is not None:
            summary = request.summary or request.tool
            answer = await ask(f"Allow {summary}? (an {request.risk} call from an MCP client)")
            if answer is not None:
                why = "approved in the MCP client" if answer else "declined in the MCP client"
                return ApprovalDecision(answer, why)
        if self.fallback is None:
            return ApprovalDecision(False, "no approver is set up for MCP calls")
        return await self.fallback.request(request)

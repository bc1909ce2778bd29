"""Tool dispatchers, at their old path: see :mod:`clawseed_edge.agent.toolcalls.dispatch`."""

from .toolcalls.dispatch import (
    NativeToolDispatcher,
    ParsedResponse,
    ToolDispatcher,
    ensure_call_ids,
    read_response,
    select_dispatcher,
)

__all__ = [
    "NativeToolDispatcher",
    "ParsedResponse",
    "ToolDispatcher",
    "ensure_call_ids",
    "read_response",
    "select_dispatcher",
]

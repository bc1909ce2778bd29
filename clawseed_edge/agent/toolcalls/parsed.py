"""The result of reading one model response, shared by every dispatcher."""

from __future__ import annotations

import msgspec

from clawseed_edge.api import ChatMessage, ToolCall

__all__ = ["ParsedResponse"]


class ParsedResponse(msgspec.Struct, frozen=True):
    """One model response, read once: what to show, what to run, what to keep.

    Attributes:
        text: The visible text (call markup and think blocks removed).
        calls: The calls to run, each with an id.
        message: The assistant message to keep in history for this response and these calls.
    """

    text: str
    calls: tuple[ToolCall, ...]
    message: ChatMessage

"""The Channel protocol: every way in (the gateway; later Telegram, MQTT, an MCP server).

A channel turns what its people send into turns, and brings them back what concerns them: the
turns' events, the notifications they asked for (a scheduled job's answer, an alert, an
emergency stop) and the approval requests they can answer. The shared services under
``clawseed_edge.channels`` reach a channel's people only through these methods, so a new
channel is a sibling of the others, never a copy of one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

__all__ = ["Channel"]


@runtime_checkable
class Channel(Protocol):
    """A way in, started and stopped by the service.

    Attributes:
        name: Unique among the service's channels (``gateway``, ``telegram``).
        answerers: How many of its people can answer an approval request now (0: the
            approvals broker does not wait for this channel).
    """

    name: str

    @property
    def answerers(self) -> int: ...

    async def start(self) -> None:
        """Start serving (listen, connect). Raises an api error that says what to fix."""
        ...

    async def stop(self, reason: str) -> None:
        """Stop accepting, let running turns finish briefly, abort the rest, close every
        session (``reason`` is told to its people). Idempotent; safe to cancel."""
        ...

    def deliver(self, frame: Mapping[str, Any]) -> None:
        """Send an event or a notification (a frame with a ``type``) to the people who asked
        for it. Never blocks: a slow recipient loses frames, not the caller's time."""
        ...

    def ask(self, frame: Mapping[str, Any]) -> None:
        """Show an ``approval_request`` frame to its people; an answer comes back through the
        approvals broker's ``resolve``. Never blocks."""
        ...

    def abort_turns(self, reason: str) -> int:
        """Abort every running turn of its conversations (an emergency stop); returns how
        many were running. Does not wait for them."""
        ...

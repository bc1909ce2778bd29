"""GatewayChannel: the gateway as a :class:`~clawseed_edge.api.Channel` of the service.

Its people are the paired clients on ``/ws/chat`` and the listeners of ``/sse``; its
conversations come from the channels' :class:`~clawseed_edge.channels.Conversations`, its
approvals from the shared broker, its notifications from the service's
:class:`~clawseed_edge.channels.Notifications`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .hub import GatewayHub
from .server import GatewayServer

__all__ = ["GatewayChannel"]


class GatewayChannel:
    """The HTTP/WebSocket gateway, started and stopped as one channel.

    Args:
        hub: What its endpoints and connections share.
        server: The uvicorn server of its Starlette app.
    """

    name = "gateway"

    def __init__(self, hub: GatewayHub, server: GatewayServer) -> None:
        self.hub = hub
        self.server = server

    @property
    def answerers(self) -> int:
        return self.hub.answerers

    @property
    def url(self) -> str:
        return self.server.url

    async def start(self) -> None:
        """Listen. Raises GatewayBindFailed (the address is in use ...), which says what to do."""
        await self.server.start()

    async def stop(self, reason: str) -> None:
        """Close every connection and stream (turns get 2 s to finish), then the server."""
        await self.hub.close_all(reason, grace_s=2.0)
        await self.server.aclose(timeout_s=3.0)

    def deliver(self, frame: Mapping[str, Any]) -> None:
        """To every ``/sse`` listener (job answers, estops, resolved approvals); a resolved
        approval to every WebSocket client too."""
        self.hub.deliver(dict(frame))

    def ask(self, frame: Mapping[str, Any]) -> None:
        self.hub.ask(dict(frame))

    def abort_turns(self, reason: str) -> int:
        return self.hub.abort_turns(reason)

"""GatewayChannel: the gateway as a :class:`~clawseed_edge.api.Channel` of the service.

Its people are the paired clients on ``/ws/chat`` and the listeners of ``/sse``; its
conversations come from the channels' :class:`~clawseed_edge.channels.Conversations`, its
approvals from the shared broker, its notifications from the service's
:class:`~clawseed_edge.channels.Notifications`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .hub import GatewayHub
from .server import GatewayServer

if TYPE_CHECKING:
    from clawseed_edge.channels.host import ChannelHost
    from clawseed_edge.config.schema import GatewaySettings

__all__ = ["GatewayChannel", "gateway_channel"]


async def gateway_channel(settings: GatewaySettings, host: ChannelHost) -> GatewayChannel:
    """The gateway built from ``[gateway]`` and the host (the ``gateway`` channel factory).

    Its hub gets the host's act, approvals, estop, conversations and state.db; the host's
    HTTP mounts (``/mcp`` when ``[mcp] http = true``) are served beside its routes. Listening
    starts with :meth:`GatewayChannel.start`.

    Raises:
        ConfigInvalid: The approvals broker or state.db is missing.
    """
    from .app import create_app

    options = host.channel_options("gateway")
    hub = GatewayHub(host, settings, remote_timeout_s=options.get("remote_timeout_s"))
    server = GatewayServer(
        create_app(hub, list(host.http_mounts)),
        settings.host,
        settings.port,
        allow_public_bind=settings.allow_public_bind,
        ws_max_size=max(4 * settings.max_frame_bytes, 1 << 20),
        trusted_proxies=settings.trusted_proxies,
        max_connections=settings.max_connections + 64,
        max_connections_per_address=settings.max_connections_per_address,
        header_timeout_s=settings.header_timeout_s,
        # A paired phone's connection gets a place a flood cannot take (admission.py).
        verify_token=hub.pairing.is_paired if settings.require_pairing else None,
    )
    return GatewayChannel(hub, server)


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

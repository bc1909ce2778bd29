"""GatewayChannel: the gateway as a :class:`~clawseed_edge.api.Channel` of the service.

Its people are the paired clients on ``/ws/chat`` and the listeners of ``/sse``; its
conversations come from the channels' :class:`~clawseed_edge.channels.Conversations`, its
approvals from the shared broker, its notifications from the service's
:class:`~clawseed_edge.channels.Notifications`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from clawseed_edge.api import Lifecycle

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
    from .door import FrontDoor, gateway_server

    options = host.channel_options("gateway")
    hub = GatewayHub(host, settings, remote_timeout_s=options.get("remote_timeout_s"))
    app = create_app(hub, list(host.http_mounts))
    # A paired phone's connection gets a place a flood cannot take (admission.py).
    verify = hub.pairing.is_paired if settings.require_pairing else None
    server = options.get("server")  # the service's front door, listening since start-up
    if server is not None and isinstance(server.app, FrontDoor) and not server.app.installed:
        server.admission.verify = verify
        return GatewayChannel(hub, server, install=app)
    return GatewayChannel(hub, gateway_server(settings, FrontDoor(), verify_token=verify), app)


class GatewayChannel:
    """The HTTP/WebSocket gateway, started and stopped as one channel.

    Args:
        hub: What its endpoints and connections share.
        server: The uvicorn server, whose app is a :class:`~.door.FrontDoor` (already
            listening when the service opened it before the rest started).
        install: The gateway's Starlette app, put behind the door at :meth:`start`.
    """

    name = "gateway"

    def __init__(self, hub: GatewayHub, server: GatewayServer, install: Any = None) -> None:
        self.hub = hub
        self.server = server
        self._install = install

    @property
    def answerers(self) -> int:
        return self.hub.answerers

    @property
    def url(self) -> str:
        return self.server.url

    async def start(self) -> None:
        """Listen (unless the door is open already) and serve the app. Raises GatewayBindFailed
        (the address is in use ...), which says what to do."""
        if self.server.state is not Lifecycle.OPEN:
            await self.server.start()
        if self._install is not None:
            self.server.app.install(self._install)
            self._install = None

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

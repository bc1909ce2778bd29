"""The front door: the gateway's listener, open while the rest of the service starts.

``clawseed-edge gateway`` binds its address before it loads the agent, the hardware and the
channels (:meth:`~clawseed_edge.service.Service.start`), so a phone or a monitor that asks at
once gets an answer rather than "connection refused", a busy port fails before any pin is
touched, and start-up costs a liveness check no more than a bare server's (issue 34:
``benchmarks/bench_service_ready.py``).

Until the gateway's app is installed, :class:`FrontDoor` answers:

* ``GET /health`` 200 ``{"status": "starting"}`` (the process is alive and serving: liveness);
* ``GET /ready`` 503 ``{"status": "starting"}`` (readiness comes with the app, as ``READY=1``);
* anything else waits for the app (at most ``wait_s``), then is served by it, or gets 503 with
  ``Retry-After`` (a WebSocket is closed with 1013, "try again later").

Once installed, every request goes straight to the app. Standard library only: answering the
first request needs neither Starlette nor the runtime.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from clawseed_edge import __version__

if TYPE_CHECKING:
    from clawseed_edge.config.schema import GatewaySettings

    from .server import GatewayServer

__all__ = ["FrontDoor", "gateway_server", "open_door"]

#: Seconds a request waits for the service to finish starting before it gets 503.
START_WAIT_S = 30.0

_Send = Callable[[dict[str, Any]], Awaitable[None]]


class FrontDoor:
    """The ASGI app the gateway's server runs: the installed app, or "starting" before it.

    Args:
        wait_s: How long a request other than /health and /ready waits for the app.
    """

    def __init__(self, wait_s: float = START_WAIT_S) -> None:
        self.app: Any = None
        self.wait_s = wait_s
        self._installed = asyncio.Event()

    @property
    def installed(self) -> bool:
        return self.app is not None

    def install(self, app: Any) -> None:
        """Serve ``app`` from now on; requests that were waiting go to it."""
        self.app = app
        self._installed.set()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: _Send) -> None:
        app = self.app
        if app is not None:
            await app(scope, receive, send)
            return
        kind = scope.get("type")
        if kind == "http" and scope.get("method") in ("GET", "HEAD"):
            path = scope.get("path")
            if path == "/health":
                await _answer(send, 200, {"status": "starting", "version": __version__})
                return
            if path == "/ready":
                await _answer(send, 503, {"status": "starting"}, retry=True)
                return
        if kind not in ("http", "websocket"):
            return  # lifespan is off; nothing else is ours to answer
        try:
            async with asyncio.timeout(self.wait_s):
                await self._installed.wait()
        except TimeoutError:
            if kind == "websocket":
                await send({"type": "websocket.close", "code": 1013})
                return
            await _answer(
                send,
                503,
                {"error": "the service is still starting; try again in a few seconds"},
                retry=True,
            )
            return
        await self.app(scope, receive, send)


async def _answer(send: _Send, status: int, body: dict[str, Any], *, retry: bool = False) -> None:
    data = json.dumps(body).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(data)).encode()),
        (b"cache-control", b"no-store"),
        (b"x-content-type-options", b"nosniff"),
    ]
    if retry:
        headers.append((b"retry-after", b"2"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})


def gateway_server(
    settings: GatewaySettings,
    app: Any,
    *,
    verify_token: Callable[[str], Awaitable[bool]] | None = None,
) -> GatewayServer:
    """The gateway's server for ``[gateway]`` (not yet listening: ``await start()``).

    Raises:
        GatewayBindRefused: A non-loopback host without ``allow_public_bind``.
    """
    from .server import GatewayServer

    return GatewayServer(
        app,
        settings.host,
        settings.port,
        allow_public_bind=settings.allow_public_bind,
        ws_max_size=max(4 * settings.max_frame_bytes, 1 << 20),
        trusted_proxies=settings.trusted_proxies,
        max_connections=settings.max_connections + 64,
        max_connections_per_address=settings.max_connections_per_address,
        header_timeout_s=settings.header_timeout_s,
        verify_token=verify_token,
    )


async def open_door(settings: GatewaySettings) -> GatewayServer:
    """The gateway's server listening on ``[gateway]``'s address with a :class:`FrontDoor`
    ("starting") until the gateway channel installs its app: /health answers at once, other
    requests wait, and a busy port fails before anything else is started.

    Raises:
        GatewayBindRefused / GatewayBindFailed: As :meth:`GatewayServer.start` does.
    """
    server = gateway_server(settings, FrontDoor())
    await server.start()
    return server

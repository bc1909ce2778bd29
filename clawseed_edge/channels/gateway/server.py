"""GatewayServer: uvicorn serving the app inside the service's own event loop.

``uvicorn.Server(config).serve()`` runs as a task of our loop (never ``uvicorn.run``, which
would own the loop and the process). We bind the socket ourselves, so a refused or busy address
is our error with our message, and port 0 gives an ephemeral port (tests). The service owns the
signals: the embedded server installs no handlers of its own.

Nor does it tick: uvicorn's ``main_loop`` wakes 10 times a second (to refresh the ``date``
header and to look at ``should_exit``), 600 wake-ups in an idle minute of a Pi that has nothing
to do. The embedded server runs uvicorn's own ``startup`` and ``shutdown`` and waits on an event
in between; the ``date`` header is made when a response asks for it (at most once a second).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import socket
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import Any

from clawseed_edge.api import Lifecycle

from .admission import Admission, guarded_protocol
from .errors import GatewayBindFailed, GatewayBindRefused

__all__ = ["GatewayServer", "check_bind", "is_loopback"]

log = logging.getLogger(__name__)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name: we cannot know where it resolves, so it is not loopback


def check_bind(host: str, allow_public_bind: bool) -> None:
    """Refuse a non-loopback address unless ``allow_public_bind`` is set.

    Raises:
        GatewayBindRefused: With what to set to allow it.
    """
    if is_loopback(host) or allow_public_bind:
        return
    raise GatewayBindRefused(
        f"refusing to listen on {host}: it is not a loopback address, so other machines could "
        "reach the gateway. Set [gateway] allow_public_bind = true to allow it (pairing stays "
        'required), or use host = "127.0.0.1"'
    )


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind((host, port))
        sock.listen(128)
        sock.setblocking(False)
    except OSError as exc:
        sock.close()
        raise GatewayBindFailed(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}; pick another port with "
            "--port or [gateway] port, or stop what uses it"
        ) from exc
    return sock


class GatewayServer:
    """Serves ``app`` on ``host:port``; :meth:`start`, then :meth:`aclose`.

    Args:
        app: The ASGI app.
        host: Address to bind (loopback unless ``allow_public_bind``).
        port: TCP port; 0 picks a free one (read :attr:`port` after start).
        allow_public_bind: Allow a non-loopback address.
        ws_max_size: Largest WebSocket frame uvicorn accepts at all; frames above the
            gateway's own limit but below this get an error frame and the connection stays.
        ws_ping_interval_s: Seconds between the pings each WebSocket gets (keepalive).
        ws_ping_timeout_s: Seconds a WebSocket has to answer a ping; then it is closed with
            1011 (a phone that left the network without closing).
        max_connections: Open TCP connections of all clients together (HTTP and WebSocket).
        max_connections_per_address: Open TCP connections of one client address.
        header_timeout_s: Seconds a new connection has to send its request headers.
        verify_token: Whether a bearer token is a paired client's: such a connection takes one
            of the places kept for paired clients (admission.py).
        trusted_proxies: Peers whose ``X-Forwarded-For``/``-Proto`` headers are believed. Empty
            (the default): none, so the client address (the key of pairing lockouts and
            limits) is always the socket's peer. uvicorn alone would trust loopback, where a
            local user or an SSH tunnel could rotate the header to dodge a lockout.
    """

    def __init__(
        self,
        app: Any,
        host: str = "127.0.0.1",
        port: int = 42617,
        *,
        allow_public_bind: bool = False,
        ws_max_size: int = 1 << 20,
        ws_ping_interval_s: float = 20.0,
        ws_ping_timeout_s: float = 20.0,
        trusted_proxies: Sequence[str] = (),
        max_connections: int = 320,
        max_connections_per_address: int = 32,
        header_timeout_s: float = 10.0,
        verify_token: Callable[[str], Awaitable[bool]] | None = None,
    ) -> None:
        check_bind(host, allow_public_bind)
        self.app = app
        self.trusted_proxies = tuple(trusted_proxies)
        self.admission = Admission(
            per_address=max_connections_per_address,
            total=max_connections,
            header_timeout_s=header_timeout_s,
            verify=verify_token,
        )
        self.host = host
        self.port = port
        self.ws_max_size = ws_max_size
        self.ws_ping_interval_s = ws_ping_interval_s
        self.ws_ping_timeout_s = ws_ping_timeout_s
        self.state = Lifecycle.UNOPENED
        self._server: Any = None
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Bind and start serving; returns once the server accepts connections.

        Raises:
            GatewayBindFailed: The address cannot be bound.
            RuntimeError: uvicorn stopped during start-up.

        Safe to cancel before it returns: the bound socket is closed with the server task.
        """
        import uvicorn

        sock = _bind(self.host, self.port)
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            self.app,
            lifespan="off",
            log_level="warning",
            access_log=False,
            # uvicorn's WebSocket protocol on wsproto (pure Python, h11's sibling): 0.36 MB of
            # imports in this process where "auto" picks the one on the websockets library
            # (1.12 MB), for the same frame size limit, keepalive pings, close codes and
            # closing handshake (tests/channels/gateway/test_ws_transport.py).
            ws="wsproto",
            ws_max_size=self.ws_max_size,
            # h11 with the admission checks in front (per-address and total caps, a header
            # deadline): a slowloris cannot take every file descriptor of the process.
            http=guarded_protocol(self.admission),
            # Also the number of connections accepted in one go before any is closed: small,
            # so refused ones give their descriptors back between batches.
            backlog=64,
            proxy_headers=bool(self.trusted_proxies),
            forwarded_allow_ips=list(self.trusted_proxies) or "",
            ws_ping_interval=self.ws_ping_interval_s,
            ws_ping_timeout=self.ws_ping_timeout_s,
            # permessage-deflate keeps ~34 KB of zlib state per connection (made at the first
            # compressed message on wsproto, at the handshake on the websockets library: 200
            # idle clients there cost 59.5 KB each with it, 25.7 KB without) to save ~1.8 KB on
            # a 50-word turn's frames: not worth it for chat.
            ws_per_message_deflate=False,
            timeout_graceful_shutdown=5,
        )
        server = self._server = _EmbeddedServer(config)
        self._task = asyncio.create_task(server.serve(sockets=[sock]), name="gateway-server")
        started = asyncio.create_task(server.started_event.wait())
        await asyncio.wait([self._task, started], return_when=asyncio.FIRST_COMPLETED)
        if not server.started:
            started.cancel()
            sock.close()
            self._task.result()
            raise RuntimeError("the gateway server stopped while starting; see the log")
        self.state = Lifecycle.OPEN
        log.debug("gateway listening on %s", self.url)  # the service prints it for people

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    async def aclose(self, timeout_s: float = 6.0) -> None:
        """Stop accepting and shut uvicorn down (force after ``timeout_s``). Idempotent.

        Safe to cancel (the server task keeps stopping).
        """
        if self.state is Lifecycle.CLOSED or self._task is None:
            self.state = Lifecycle.CLOSED
            return
        self.state = Lifecycle.CLOSING
        self._server.request_exit()
        try:
            async with asyncio.timeout(timeout_s):
                await asyncio.shield(self._task)
        except TimeoutError:
            self._server.force_exit = True
            self._task.cancel()
        except Exception:
            log.exception("the gateway server failed while stopping")
        with contextlib.suppress(BaseException):
            await self._task
        self.state = Lifecycle.CLOSED


def _embedded_server_class() -> Any:
    import uvicorn
    from uvicorn.server import ServerState

    class DatedState(ServerState):
        """uvicorn's shared state whose default headers carry a ``date`` made on demand."""

        def __init__(self, config: Any) -> None:
            self._config = config
            self._second = -1
            self._headers: list[tuple[bytes, bytes]] = []
            super().__init__()

        @property
        def default_headers(self) -> list[tuple[bytes, bytes]]:
            # Read by the HTTP protocol for each response (the WebSocket one per handshake).
            second = int(time.time())
            if second != self._second:
                from email.utils import formatdate

                self._second = second
                date = [(b"date", formatdate(second, usegmt=True).encode())]
                extra = list(self._config.encoded_headers)
                self._headers = (date if self._config.date_header else []) + extra
            return self._headers

        @default_headers.setter
        def default_headers(self, value: list[tuple[bytes, bytes]]) -> None:
            pass  # uvicorn's __init__ and tick set it; ours is made on demand

    class EmbeddedServer(uvicorn.Server):
        def __init__(self, config: Any) -> None:
            super().__init__(config)
            self.server_state = DatedState(config)
            self.started_event = asyncio.Event()
            self._exit = asyncio.Event()

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            # The service owns SIGTERM/SIGINT (safe state first); uvicorn must not take them.
            yield

        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets=sockets)
            self.started_event.set()

        async def main_loop(self) -> None:
            # Instead of uvicorn's 10 Hz tick: sleep until asked to stop.
            if not self.should_exit:
                await self._exit.wait()

        def request_exit(self) -> None:
            """Stop serving (uvicorn's shutdown: stop accepting, close, wait for the tasks)."""
            self.should_exit = True
            self._exit.set()

    return EmbeddedServer


def _EmbeddedServer(config: Any) -> Any:
    return _embedded_server_class()(config)

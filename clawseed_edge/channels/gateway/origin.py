"""Host, Origin and Content-Type checks: no other web page can drive the gateway.

A page on another site can make a browser send requests to the gateway: a "simple" cross-origin
POST (``text/plain``, no preflight) reaches it even though the page cannot read the answer, and
DNS rebinding makes a page's own name resolve to the device. With ``require_pairing = false`` such
a request switched a heater. So, always, whatever the pairing setting:

* ``Host`` must name the gateway: an IP address (a phone on the LAN uses one), ``localhost``,
  this machine's host name (and ``NAME.local``), or a name in ``[gateway] allowed_hosts``. A
  rebound name (``attacker.example``) is refused with 421.
* A request that changes state (``POST``, ``PUT``, ``PATCH``, ``DELETE``) or opens a WebSocket
  and carries an ``Origin`` (browsers always send one on such requests) must come from the
  gateway's own origin (same host and port as ``Host``) or a name in ``allowed_hosts``: 403.
* A request that changes state and has a body must send ``Content-Type: application/json``
  (415). A JSON body cannot be sent cross-origin without a preflight, which we never answer.
  A request without a body (the web app's STOP, ``POST /pair`` whose code is a header) needs
  none: from a browser on another site it carries an ``Origin`` and is refused above.

Clients that are not browsers (the SDK, curl, the Android app) send no ``Origin`` and JSON, so
they pass unchanged.
"""

from __future__ import annotations

import ipaddress
import json
import socket
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

__all__ = ["OriginGuard", "gateway_host_names"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def gateway_host_names(extra: Iterable[str] = ()) -> frozenset[str]:
    """The names (lower case, no port) that ``Host`` may carry besides an IP address."""
    names = {"localhost", "localhost.localdomain"}
    try:
        host = socket.gethostname().strip().lower()
    except OSError:  # pragma: no cover - gethostname does not fail on Linux
        host = ""
    if host:
        names.update({host, f"{host}.local", host.split(".")[0]})
    names.update(n.strip().lower().rstrip(".") for n in extra if n.strip())
    return frozenset(names)


def _split_host(value: str) -> tuple[str, str]:
    """``host[:port]`` (brackets for IPv6) -> (host in lower case, port or "")."""
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return value, ""
        return value[1:end], value[end + 2 :] if value[end + 1 : end + 2] == ":" else ""
    if value.count(":") == 1:
        host, port = value.split(":")
        return host, port
    return value, ""


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


class OriginGuard:
    """ASGI middleware: the checks of the module docstring, before any route runs.

    Args:
        app: The gateway's app.
        allowed_hosts: Extra names for ``Host`` and ``Origin`` (``[gateway] allowed_hosts``),
            e.g. the name a reverse proxy serves the gateway under.
    """

    def __init__(self, app: ASGIApp, allowed_hosts: Iterable[str] = ()) -> None:
        self.app = app
        self.names = gateway_host_names(allowed_hosts)
        # Only configured names may be another origin (a reverse proxy's): another service
        # on this machine's own name and another port is another site.
        self.origins = frozenset(n.strip().lower().rstrip(".") for n in allowed_hosts if n.strip())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        refusal = self._refusal(scope, headers)
        if refusal is None:
            await self.app(scope, receive, send)
            return
        status, code, message = refusal
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008, "reason": message[:120]})
            return
        body = json.dumps({"error": {"code": code, "message": message}}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})

    def _host_ok(self, host: str) -> bool:
        return _is_ip(host) or host in self.names

    def _refusal(self, scope: Scope, headers: dict[str, str]) -> tuple[int, str, str] | None:
        host_header = headers.get("host", "")
        host, port = _split_host(host_header)
        if host_header and not self._host_ok(host):
            return (
                421,
                "host_not_allowed",
                f"this gateway does not answer to the name {host[:80]!r}; use its address, or "
                "add the name to [gateway] allowed_hosts",
            )
        method = scope.get("method", "GET").upper()
        changes_state = scope["type"] == "websocket" or method in _STATE_CHANGING
        if not changes_state:
            return None
        origin = headers.get("origin")
        if origin is not None and not self._origin_ok(origin, host, port):
            return (
                403,
                "origin_not_allowed",
                f"requests from the web page at {origin[:80]!r} are refused; the gateway's "
                "own web app, clients that are not browsers, and names in "
                "[gateway] allowed_hosts may change state",
            )
        has_body = headers.get("content-length", "0").strip() not in ("", "0") or (
            "transfer-encoding" in headers
        )
        if scope["type"] == "http" and has_body:
            content_type = headers.get("content-type", "").split(";")[0].strip().lower()
            if content_type != "application/json":
                return (
                    415,
                    "content_type_not_json",
                    f"{method} needs 'Content-Type: application/json' (got "
                    f"{content_type[:60] or 'none'!r}); send the body as JSON",
                )
        return None

    def _origin_ok(self, origin: str, host: str, port: str) -> bool:
        if origin == "null":  # sandboxed frames, file:// pages
            return False
        parts = urlsplit(origin)
        origin_host = (parts.hostname or "").lower()
        if not origin_host:
            return False
        if origin_host in self.origins:
            return True  # a configured name (a reverse proxy's)
        # Same origin as the page the gateway served: same host and port as Host.
        default = "443" if parts.scheme == "https" else "80"
        try:
            origin_port = str(parts.port) if parts.port is not None else default
        except ValueError:
            return False
        host_port = port or default
        return origin_host == host and origin_port == host_port

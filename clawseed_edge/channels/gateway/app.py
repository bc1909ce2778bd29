"""The Starlette application: every route, and JSON errors for unknown paths and methods."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from .endpoint import bearer_token, error_response
from .errors import ClientError, error_body
from .hub import GatewayHub
from .origin import OriginGuard
from .routes_api import api_routes
from .routes_chat import chat_routes
from .routes_config import config_routes
from .routes_public import public_routes
from .routes_static import static_routes

__all__ = ["TokenGate", "create_app"]

_CODES = {404: "not_found", 405: "method_not_allowed"}


async def _http_error(request: Request, exc: Any) -> JSONResponse:
    status = getattr(exc, "status_code", 500)
    if status == 404:
        message = f"no endpoint at {request.url.path}; see docs/gateway.md for the endpoints"
    elif status == 405:
        message = f"{request.method} is not allowed on {request.url.path}"
    else:
        message = str(getattr(exc, "detail", "")) or "request failed"
    return JSONResponse(error_body(_CODES.get(status, "http_error"), message), status)


class TokenGate:
    """An ASGI app served only to paired clients: a request without a valid bearer token gets
    the gateway's 401 (``unauthorized``, with the ``WWW-Authenticate`` challenge that points to
    the path's resource metadata) and never reaches ``app``; one with a token reaches it with
    the paired client in ``scope["clawseed.client"]``."""

    def __init__(self, hub: GatewayHub, app: ASGIApp, path: str = "") -> None:
        self.hub = hub
        self.app = app
        self.path = path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            request = Request(scope)
            try:
                token = bearer_token(request.headers, request.query_params)
                scope["clawseed.client"] = await self.hub.pairing.authenticate(token)
            except ClientError as exc:
                response = error_response(exc)
                if exc.status == 401:
                    where = f"{str(request.base_url).rstrip('/')}{_METADATA}{self.path}"
                    response.headers["WWW-Authenticate"] = f'Bearer resource_metadata="{where}"'
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


#: Where a mounted path's protected-resource metadata is (RFC 9728), for MCP hosts.
_METADATA = "/.well-known/oauth-protected-resource"


def _resource_metadata(path: str) -> Any:
    """The protected-resource metadata of ``path``: a bearer token from pairing, no OAuth."""

    async def metadata(request: Request) -> JSONResponse:
        base = str(request.base_url).rstrip("/")
        return JSONResponse(
            {
                "resource": f"{base}{path}",
                "authorization_servers": [],
                "bearer_methods_supported": ["header"],
                "resource_name": "clawseed-edge",
                "clawseed_pairing": (
                    "no OAuth: pair first (POST /pair with the code `clawseed-edge pair` "
                    "prints) and send the token as 'Authorization: Bearer <token>'"
                ),
            }
        )

    return metadata


def create_app(hub: GatewayHub, mounts: Sequence[tuple[str, ASGIApp]] = ()) -> Starlette:
    """The gateway's ASGI app over ``hub``.

    ``mounts``: ``(path, app)`` pairs served at exactly ``path`` (any method) to paired clients
    only (:class:`TokenGate`), e.g. the MCP server at ``/mcp``.
    """
    routes: list[Any] = [
        *public_routes(hub),
        *chat_routes(hub),
        *api_routes(hub),
        *config_routes(hub),
        *(Route(path, TokenGate(hub, app, path)) for path, app in mounts),
        *(
            Route(where, _resource_metadata(path), methods=["GET"])
            for path, _ in mounts
            for where in (_METADATA, _METADATA + path)
        ),
        *static_routes(),  # the phone web app: exact file paths only, after every endpoint
    ]
    app = Starlette(
        routes=routes,
        exception_handlers={HTTPException: _http_error},
        # Host, Origin and Content-Type first: no other web page drives the device.
        middleware=[Middleware(OriginGuard, allowed_hosts=hub.settings.allowed_hosts)],
    )
    app.state.hub = hub
    return app

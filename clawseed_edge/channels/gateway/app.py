"""The Starlette application: every route, and JSON errors for unknown paths and methods."""

from __future__ import annotations

from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse

from .errors import error_body
from .hub import GatewayHub
from .origin import OriginGuard
from .routes_api import api_routes
from .routes_chat import chat_routes
from .routes_config import config_routes
from .routes_public import public_routes
from .routes_static import static_routes

__all__ = ["create_app"]

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


def create_app(hub: GatewayHub) -> Starlette:
    """The gateway's ASGI app over ``hub``."""
    routes: list[Any] = [
        *public_routes(hub),
        *chat_routes(hub),
        *api_routes(hub),
        *config_routes(hub),
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

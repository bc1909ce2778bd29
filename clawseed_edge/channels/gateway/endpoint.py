"""What every HTTP endpoint shares: the error shape, auth, rate limits, bounded bodies.

An endpoint is written as ``async def handler(ctx: RequestContext) -> Response | dict`` and
wrapped by :func:`endpoint`, which authenticates (unless ``public``), applies the per-token rate
limit, and turns a :class:`~.errors.ClientError` into ``{"error": {"code", "message"}}``.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from clawseed_edge.state import TokenInfo

from .errors import ClientError, error_body
from .hub import GatewayHub
from .limits import address_group, loads_bounded

__all__ = [
    "RequestContext",
    "answers_approvals",
    "bearer_token",
    "client_key",
    "endpoint",
    "read_body",
]

log = logging.getLogger(__name__)


@dataclass(slots=True)
class RequestContext:
    request: Request
    hub: GatewayHub
    who: TokenInfo | None

    async def json(self) -> Any:
        """The body as JSON, bounded in size and depth.

        Safe to cancel.
        """
        raw = await read_body(self.request, self.hub.settings.max_body_bytes)
        if not raw.strip():
            raise ClientError("body_missing", "this endpoint takes a JSON body; send one")
        return loads_bounded(raw, max_bytes=self.hub.settings.max_body_bytes)

    async def json_object(self) -> dict[str, Any]:
        body = await self.json()
        if not isinstance(body, dict):
            raise ClientError("body_invalid", "the body must be a JSON object")
        return body


def client_key(request: Request) -> str:
    """The client's address (an IPv6 one by its /64): the key of pairing lockouts and of
    limits before pairing."""
    return address_group(request.client.host) if request.client is not None else "unknown"


def bearer_token(headers: Any, query: Any, *, allow_query: bool = False) -> str | None:
    """The request's token: the ``Authorization: Bearer`` header, or ``?token=`` where allowed.

    ``?token=`` is for WebSockets only (``allow_query``), whose browser API cannot set headers;
    on HTTP a token in the URL ends up in proxy and server logs, so it is refused.

    Raises:
        ClientError: ``token_in_url`` (400) for ``?token=`` on HTTP.
    """
    value = headers.get("authorization", "")
    if "token" in query and not allow_query:
        raise ClientError(
            "token_in_url",
            "?token= is accepted on WebSockets only (a URL ends up in proxy and server logs); "
            "send the token in an 'Authorization: Bearer TOKEN' header",
            400,
        )
    if value.lower().startswith("bearer "):
        return str(value[7:].strip()) or None
    token = query.get("token")
    return str(token) if token else None


async def read_body(request: Request, limit: int) -> bytes:
    """The request body, refused past ``limit`` bytes without reading the rest.

    Raises:
        ClientError: ``body_too_large`` (413).

    Safe to cancel (the request is abandoned).
    """
    declared = request.headers.get("content-length")
    too_large = ClientError(
        "body_too_large",
        f"the request body is over the limit of {limit} bytes; send less "
        "([gateway] max_body_bytes)",
        413,
    )
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise too_large
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise too_large
        chunks.append(chunk)
    return b"".join(chunks)


def error_response(exc: ClientError) -> JSONResponse:
    return JSONResponse(error_body(exc.code, str(exc)), exc.status, headers=exc.headers)


Handler = Callable[[RequestContext], Awaitable[Any]]


def endpoint(
    hub: GatewayHub, handler: Handler, *, public: bool = False
) -> Callable[[Request], Awaitable[Response]]:
    """Wrap ``handler`` with auth, the rate limit and the error shape."""

    async def wrapped(request: Request) -> Response:
        try:
            who: TokenInfo | None = None
            if public:
                hub.rate.hit(f"addr:{client_key(request)}")
            else:
                who = await hub.pairing.authenticate(
                    bearer_token(request.headers, request.query_params)
                )
                hub.rate.hit(f"token:{who.id}")
            result = await handler(RequestContext(request, hub, who))
        except ClientError as exc:
            return error_response(exc)
        if isinstance(result, Response):
            return result
        return JSONResponse(result)

    wrapped.__name__ = getattr(handler, "__name__", "endpoint")
    return wrapped


def answers_approvals(query: Mapping[str, str]) -> bool:
    """Whether a client answers approvals: only one that declares it with ``?approvals=1``
    (the web app, the Python SDK). One that never said so (a client written for a protocol
    without approvals, a display) is shown the requests but never waited for;
    ``?approvals=0`` says so explicitly."""
    return query.get("approvals", "0").lower() in ("1", "true", "yes", "on")

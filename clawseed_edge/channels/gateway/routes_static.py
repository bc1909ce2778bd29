"""The phone web app: the files of ``static/``, served at ``/`` without auth.

One route per file that exists when the app is built (no path parameter), so the app can never
shadow ``/api``, ``/ws``, ``/health`` or any other endpoint, and no path outside ``static/``
can be asked for. The files hold no secrets: the app pairs and keeps its token in the browser.
Every answer carries a strict Content-Security-Policy (scripts and styles from the gateway
only, no inline code) and an ETag; ``Cache-Control: no-cache`` makes browsers revalidate, and
the service worker keeps the shell for when the device is unreachable.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from importlib import resources
from pathlib import PurePosixPath

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

__all__ = ["CONTENT_SECURITY_POLICY", "CONTENT_TYPES", "static_routes"]

CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".webmanifest": "application/manifest+json",
    ".svg": "image/svg+xml",
    ".png": "image/png",
}

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; manifest-src 'self'; worker-src 'self'; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'"
)

_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}


def _static_file(
    body: bytes, media_type: str, *, worker: bool = False
) -> Callable[[Request], Awaitable[Response]]:
    etag = '"' + hashlib.sha256(body).hexdigest()[:20] + '"'
    headers = {**_HEADERS, "ETag": etag}
    if worker:
        headers["Service-Worker-Allowed"] = "/"

    async def serve(request: Request) -> Response:
        if etag in request.headers.get("if-none-match", ""):
            return Response(status_code=304, headers=headers)
        return Response(body, media_type=media_type, headers=headers)

    return serve


def static_routes() -> list[Route]:
    """A GET route for each file of the app (``/`` is ``index.html``)."""
    folder = resources.files("clawseed_edge.channels.gateway") / "static"
    routes: list[Route] = []
    for item in sorted(folder.iterdir(), key=lambda i: i.name):
        suffix = PurePosixPath(item.name).suffix
        if not item.is_file() or suffix not in CONTENT_TYPES:
            continue
        serve = _static_file(item.read_bytes(), CONTENT_TYPES[suffix], worker=item.name == "sw.js")
        routes.append(Route(f"/{item.name}", serve, methods=["GET", "HEAD"]))
        if item.name == "index.html":
            routes.append(Route("/", serve, methods=["GET", "HEAD"]))
    return routes

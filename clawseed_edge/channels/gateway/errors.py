"""The gateway's errors and how they reach a client.

Every HTTP error is ``{"error": {"code": ..., "message": ...}}`` with a status; every WebSocket
error is an ``error`` frame ``{"type": "error", "code": ..., "message": ...}``. The message says
what was wrong and what to do; ``code`` is stable for programs.
"""

from __future__ import annotations

from typing import Any

from clawseed_edge.api import ClawseedError

__all__ = ["ClientError", "GatewayBindRefused", "GatewayError", "error_body"]


class GatewayError(ClawseedError):
    """Root of the gateway's own errors."""

    code = "gateway_error"


class GatewayBindRefused(GatewayError, PermissionError):
    """The configured address is not loopback and ``allow_public_bind`` is not set."""

    code = "gateway_bind_refused"


class GatewayBindFailed(GatewayError, OSError):
    """The address could not be bound (in use, not an address of this machine)."""

    code = "gateway_bind_failed"


class ClientError(GatewayError, ValueError):
    """Something a client sent is refused; ``status`` is the HTTP status to answer with.

    Args:
        code: Stable machine-readable code (``body_too_large``, ``frame_invalid`` ...).
        message: What was wrong and what to do.
        status: HTTP status (WebSocket frames ignore it).
        headers: Extra response headers (``Retry-After``).
    """

    def __init__(
        self, code: str, message: str, status: int = 400, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.status = status
        self.headers = headers or {}


def error_body(code: str, message: str) -> dict[str, Any]:
    """The JSON body of an HTTP error."""
    return {"error": {"code": code, "message": message}}

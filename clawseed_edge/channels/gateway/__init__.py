"""The gateway: drive a headless device from a phone over HTTP and WebSocket.

Starlette on uvicorn, run inside the service's event loop (:class:`GatewayServer`); pairing with
a one-time code (:class:`PairingGate`); ``/ws/chat`` speaking the ClawSeed Android client's
protocol (:class:`ChatConnection`); remote tools; approvals routed to every paired client
(the channels' :class:`~clawseed_edge.channels.ApprovalBroker`). docs/gateway.md describes the frames and endpoints.

Names are imported on first use: ``check_bind`` does not load Starlette.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "ChatConnection",
    "ClientError",
    "GatewayBindFailed",
    "GatewayBindRefused",
    "GatewayError",
    "GatewayHub",
    "GatewayServer",
    "PairingGate",
    "check_bind",
    "create_app",
]

_WHERE = {
    "ChatConnection": "connection",
    "ClientError": "errors",
    "GatewayBindFailed": "errors",
    "GatewayBindRefused": "errors",
    "GatewayError": "errors",
    "GatewayHub": "hub",
    "GatewayServer": "server",
    "PairingGate": "pairing",
    "check_bind": "server",
    "create_app": "app",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)

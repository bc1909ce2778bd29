"""The gateway: drive a headless device from a phone over HTTP and WebSocket.

Starlette on uvicorn, run inside the service's event loop (:class:`GatewayServer`); pairing with
a one-time code (:class:`PairingGate`); ``/ws/chat`` speaking the ClawSeed Android client's
protocol (:class:`ChatConnection`); remote tools; approvals routed to every paired client
(the channels' :class:`~clawseed_edge.channels.ApprovalBroker`). docs/gateway.md describes the frames and endpoints.

Names are imported on first use: ``check_bind`` does not load Starlette.
"""

from __future__ import annotations

from clawseed_edge.api.lazy import lazy_face as _lazy_face

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


__getattr__, __dir__ = _lazy_face(__name__, _WHERE, __all__)

"""``clawseed-edge gateway``: ``run`` with the gateway on (HTTP + WebSocket for phones)."""

from __future__ import annotations

import argparse
from typing import Any

from .common import add_runtime_options

__all__ = ["register"]


def register(sub: Any) -> None:
    gateway = sub.add_parser(
        "gateway",
        help="run the service with the gateway on: chat, tools and approvals from a phone",
        description=(
            "Run the service with the HTTP/WebSocket gateway on. It listens on 127.0.0.1 unless "
            "told otherwise; a non-loopback --host needs [gateway] allow_public_bind = true. "
            "A one-time pairing code is printed at start (`clawseed-edge pair` prints another; "
            "under systemd only `pair` does, so the code stays out of the journal)."
        ),
    )
    add_runtime_options(gateway)
    gateway.add_argument("--host", help="address to listen on (default: [gateway] host)")
    gateway.add_argument("--port", type=int, help="TCP port (default: [gateway] port, 42617)")
    gateway.set_defaults(func=_gateway)


def _gateway(args: argparse.Namespace) -> int:
    from .run_cmd import run_service

    return run_service(args, gateway=True)

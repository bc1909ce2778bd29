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
    gateway.add_argument(
        "--port",
        type=tcp_port,
        help="TCP port 0-65535 (default: [gateway] port, 42617; 0: any free)",
    )
    gateway.set_defaults(func=_gateway)


def _gateway(args: argparse.Namespace) -> int:
    from .run_cmd import run_service

    return run_service(args, gateway=True)


def tcp_port(text: str) -> int:
    """``--port``: an integer in 0-65535, as ``[gateway] port`` is (argparse says which flag)."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number (0-65535)") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is out of range: a TCP port is 0-65535")
    return port

"""``clawseed-edge channels list``: each way in (the gateway, Telegram) and its state.

With the service running, its channels are asked over the control socket (``polling``,
``retrying`` with the reason, ``failed`` with what to do); otherwise the config file says
which channels ``run`` would start.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from .common import described, run_async

__all__ = ["register"]


def register(sub: Any) -> None:
    channels = sub.add_parser(
        "channels",
        help="the ways in (gateway, Telegram) and their state",
        description=described(__doc__),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    inner = channels.add_subparsers(dest="channels_command", metavar="COMMAND")
    listing = inner.add_parser("list", help="each channel and its state")
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.set_defaults(func=_list)
    channels.set_defaults(func=_list, json=False)


def _list(args: argparse.Namespace) -> int:
    async def main() -> int:
        rows = await channel_rows(getattr(args, "config", None))
        if args.json:
            print(json.dumps(rows, indent=2))
            return 0
        width = max(len(r["name"]) for r in rows)
        for row in rows:
            detail = f"  {row['detail']}" if row.get("detail") else ""
            print(f"{row['name']:<{width}}  {row['state']}{detail}")
        return 0

    return run_async(args, main)


async def channel_rows(config: str | None = None) -> list[dict[str, Any]]:
    """The running service's channels, else the configured ones (``enabled``/``off``)."""
    from clawseed_edge.config.file import load_config
    from clawseed_edge.config.paths import clawseed_home
    from clawseed_edge.service import ControlError, control_request, find_control_socket

    running: dict[str, dict[str, Any]] = {}
    try:
        answer = await control_request(
            find_control_socket(clawseed_home()), "status", timeout_s=5.0
        )
        for channel in answer.get("channels") or []:
            running[str(channel.get("name"))] = dict(channel)
    except ControlError:
        answer = None
    loaded = load_config(config)
    configured = {
        "gateway": loaded.config.gateway.enabled,
        "telegram": loaded.config.channels.telegram.enabled,
    }
    rows = []
    for name, enabled in configured.items():
        if name in running:
            rows.append(running.pop(name))
        elif answer is not None:
            rows.append({"name": name, "state": "off" if not enabled else "not started"})
        else:
            state = "enabled (the service is not running)" if enabled else "off"
            rows.append({"name": name, "state": state})
    rows.extend(running.values())
    return rows

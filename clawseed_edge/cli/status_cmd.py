"""``clawseed-edge status`` and ``reload``: ask the running service over its control socket.

Both find the service by its socket (``$CLAWSEED_HOME/control.sock``, else the system
service's ``/var/lib/clawseed-edge/control.sock``): no PID needed. ``reload`` re-reads the
config file and applies ``[provider]`` (name, model, server) and ``[autonomy]`` at once; it
names every other changed table, which needs ``systemctl restart clawseed-edge``.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

from .common import described, run_async

__all__ = ["register"]


def register(sub: Any) -> None:
    status = sub.add_parser(
        "status",
        help="what the running service is doing (over its control socket)",
        description=described(__doc__),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    status.add_argument("--json", action="store_true", help="print JSON")
    status.set_defaults(func=_status)
    reload = sub.add_parser(
        "reload",
        help="re-read provider, model and autonomy in the running service",
        description=described(__doc__),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    reload.add_argument("--json", action="store_true", help="print JSON")
    reload.set_defaults(func=_reload)


async def ask(op: str) -> dict[str, Any]:
    """One request to the running service (found by :func:`find_control_socket`)."""
    from clawseed_edge.config.paths import clawseed_home
    from clawseed_edge.service import ControlError, control_request, find_control_socket
    from clawseed_edge.service.control import SYSTEM_SOCKET

    try:
        answer = await control_request(find_control_socket(clawseed_home()), op, timeout_s=15.0)
    except ControlError as exc:
        state_dir = SYSTEM_SOCKET.parent
        if state_dir.is_dir() and not os.access(state_dir, os.X_OK):
            raise ControlError(
                f"{exc}; the system service's socket is in {state_dir}, which only its user "
                f"and root can enter: sudo clawseed-edge {op}"
            ) from exc
        raise
    answer.pop("ok", None)
    return answer


def _status(args: argparse.Namespace) -> int:
    async def main() -> int:
        answer = await ask("status")
        if args.json:
            print(json.dumps(answer, indent=2))
            return 0
        print(f"running: {answer.get('summary', '')}")
        from .hardware_cmd import estop_line

        print(estop_line(answer.get("estop") or {}))
        for key in (
            "pid",
            "uptime_s",
            "provider",
            "autonomy",
            "gateway",
            "connections",
            "scheduler",
            "automations",
            "config",
            "watchdog_s",
        ):
            if answer.get(key) is not None:
                print(f"  {key}: {answer[key]}")
        for channel in answer.get("channels") or []:
            detail = f" ({channel['detail']})" if channel.get("detail") else ""
            print(f"  channel {channel.get('name')}: {channel.get('state')}{detail}")
        return 0

    return run_async(args, main)


def _reload(args: argparse.Namespace) -> int:
    async def main() -> int:
        answer = await ask("reload")
        if args.json:
            print(json.dumps(answer, indent=2))
            return 0
        applied = answer.get("applied") or []
        print(
            f"reloaded: {', '.join(applied) if applied else 'provider and autonomy unchanged'}"
            f" (now {answer.get('provider')}, autonomy {answer.get('autonomy')})"
        )
        restart = answer.get("needs_restart") or []
        if restart:
            print(
                f"needs a restart to apply: {', '.join(restart)} (systemctl restart clawseed-edge)"
            )
        return 0

    return run_async(args, main)

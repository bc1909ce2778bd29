"""``clawseed-edge automations list`` and ``automations resume``: the running service's rules.

``list`` shows each ``[[automations]]`` rule (active or not), whether the emergency stop paused
them, and the recorded firings. ``resume`` lets them act again after an emergency stop.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from .common import described, run_async

__all__ = ["register"]


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "automations",
        help="rules on sensor readings in the running service (list, resume)",
        description=described(__doc__),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    group = parser.add_subparsers(dest="automations_command", metavar="COMMAND")
    p_list = group.add_parser("list", help="the rules, their state and their firings")
    p_list.add_argument("--json", action="store_true", help="print JSON")
    p_list.set_defaults(func=_list)
    p_resume = group.add_parser("resume", help="act again after an emergency stop")
    p_resume.set_defaults(func=_resume)
    parser.set_defaults(func=lambda args: (parser.print_help(), 2)[1])


async def _ask(op: str) -> dict[str, Any]:
    from clawseed_edge.config.paths import clawseed_home
    from clawseed_edge.service import control_request, find_control_socket

    return await control_request(find_control_socket(clawseed_home()), op, timeout_s=10.0)


def _list(args: argparse.Namespace) -> int:
    async def main() -> int:
        answer = await _ask("automations")
        answer.pop("ok", None)
        if args.json:
            print(json.dumps(answer, indent=2, ensure_ascii=False))
            return 0
        if not answer["automations"]:
            print("no [[automations]] in the running service")
        for rule in answer["automations"]:
            state = "active" if rule["active"] else "waiting"
            print(f"{rule['name']}: when {rule['when']} ({state})")
        if answer.get("paused"):
            print(f"paused: {answer['paused']} (clawseed-edge automations resume)")
        for f in answer["firings"]:
            when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(f["at"]))
            outcome = f.get("output") if f.get("ok") else f"failed: {f.get('error')}"
            print(f"  {when} {f['automation']} {f['event']}: {f.get('tool', '-')} {outcome}")
        return 0

    return run_async(args, main)


def _resume(args: argparse.Namespace) -> int:
    async def main() -> int:
        answer = await _ask("automations_resume")
        print("automations resumed" if answer.get("resumed") else "automations were not paused")
        return 0

    return run_async(args, main)

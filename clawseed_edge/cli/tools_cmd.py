"""``clawseed-edge tools list``: the tools the model would see, with their risk class."""

from __future__ import annotations

import argparse
import json
from typing import Any

from .common import add_runtime_options, run_async

__all__ = ["register"]


def register(sub: Any) -> None:
    tools = sub.add_parser("tools", help="list the agent's tools")
    tools_sub = tools.add_subparsers(dest="tools_command", metavar="COMMAND", required=True)
    listing = tools_sub.add_parser("list", help="list the tools the model would see")
    listing.add_argument("--json", action="store_true", help="print the tool specs as JSON")
    add_runtime_options(listing)
    listing.set_defaults(func=_list)


def _list(args: argparse.Namespace) -> int:
    from clawseed_edge.agent.approval import StaticApprover
    from clawseed_edge.config.assemble import assemble

    from .common import load_from_args

    async def main() -> int:
        loaded = load_from_args(args)
        runtime = await assemble(
            loaded, sim=args.sim, approver=StaticApprover(False), connect=False
        )
        async with runtime:
            registry = runtime.agent.registry
            rows = [t for t in (registry.get(n) for n in sorted(registry.names())) if t]
            if args.json:
                out = [
                    {
                        "name": t.name,
                        "risk": t.risk.value,
                        "description": t.description,
                        "parameters": t.parameters,
                    }
                    for t in rows
                ]
                print(json.dumps(out, indent=2, default=str))
                return 0
            width = max((len(t.name) for t in rows), default=4)
            for tool in rows:
                desc = " ".join(tool.description.split())
                print(f"{tool.name:<{width}}  {tool.risk.value:<9}  {desc}")
            return 0

    return run_async(args, main)

"""``clawseed-edge tools list``: the tools the model would see, with their risk class, and the
built-in tools that are off, with the ``[tools]`` key that turns each one on."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

from .common import add_runtime_options, run_async

__all__ = ["register"]


def register(sub: Any) -> None:
    tools = sub.add_parser("tools", help="list the agent's tools")
    tools_sub = tools.add_subparsers(dest="tools_command", metavar="COMMAND", required=True)
    listing = tools_sub.add_parser(
        "list", help="list the tools the model would see, and the built-ins that are off"
    )
    listing.add_argument(
        "--json",
        action="store_true",
        help="print the tools as JSON (name, risk, enabled, and the spec or the off_reason)",
    )
    add_runtime_options(listing)
    listing.set_defaults(func=_list)


def _list(args: argparse.Namespace) -> int:
    from clawseed_edge.agent.approval import StaticApprover
    from clawseed_edge.config.assembly import assemble
    from clawseed_edge.config.tool_table import builtin_tools

    from .common import load_from_args

    async def main() -> int:
        loaded = load_from_args(args)
        runtime = await assemble(
            loaded, sim=args.sim, approver=StaticApprover(False), connect=False
        )
        async with runtime:
            registry = runtime.agent.registry
            rows = [
                _row(t.name, t.risk.value, None, t.description + _waiting(t), t.parameters)
                for t in (registry.get(n) for n in sorted(registry.names()))
                if t
            ]
            for row in rows:  # MCP tools say which server they come from
                source = str(registry.source_of(row["name"]) or "")
                if source.startswith("mcp:"):
                    row["source"] = source
            seen = {row["name"] for row in rows}
            filtered = set(registry.filtered_out)
            for builtin in builtin_tools(loaded.config):
                if builtin.name in seen:
                    continue
                if not builtin.enabled:
                    why = builtin.turn_on
                elif builtin.name in filtered:
                    why = "filtered out by [tools] allowed / denied"
                else:
                    continue
                rows.append(_row(builtin.name, builtin.risk.value, why, "", None))
            rows.extend(_scheduler_rows(loaded.config.scheduler.enabled, seen, registry.permits))
            rows.extend(_history_rows(loaded.config, seen, registry.permits))
            rows.sort(key=lambda r: (not r["enabled"], r["name"]))
            if args.json:
                print(json.dumps(rows, indent=2, default=str))
                return 0
            width = max((len(r["name"]) for r in rows), default=4)
            for row in rows:
                if row["enabled"]:
                    state, text = "on ", " ".join(row["description"].split())
                    if "source" in row:
                        text = f"(MCP server {row['source'].removeprefix('mcp:')}) {text}"
                else:
                    state, text = "off", f"(off: {row['off_reason']})"
                print(f"{row['name']:<{width}}  {row['risk']:<9}  {state}  {text}")
            return 0

    return run_async(args, main)


def _waiting(tool: Any) -> str:
    """What a tool that follows other nodes' devices says while none of them is known."""
    if getattr(tool, "offered", True):
        return ""
    return " (offered to the model once a node on the MQTT broker has such a device)"


def _scheduler_rows(
    enabled: bool, seen: set[str], permits: Callable[[str], bool]
) -> list[dict[str, Any]]:
    """The cron tools: the service (`run`) adds them to its agent when the scheduler is on."""
    from clawseed_edge.scheduler import CronAdd, CronList, CronRemove

    rows = []
    for tool in (CronAdd, CronList, CronRemove):
        if tool.name in seen:
            continue
        if not enabled:
            why: str | None = "set [scheduler] enabled = true"
        elif not permits(tool.name):
            why = "filtered out by [tools] allowed / denied"
        else:
            why = None
        description = f"{tool.description} (only in `clawseed-edge run`, which hosts the jobs)"
        rows.append(_row(tool.name, tool.risk.value, why, description, tool.parameters))
    return rows


def _history_rows(config: Any, seen: set[str], permits: Callable[[str], bool]) -> list[Any]:
    """``sensor_history``: in the service, which keeps the history (and in ``agent``/``chat``
    once its file exists)."""
    from clawseed_edge.tools.sensor_history import SensorHistoryTool

    tool = SensorHistoryTool
    if tool.name in seen:
        return []
    sampled = [s for s in config.sensors if str(s.update_interval) != "never"]
    if not config.history.enabled:
        why: str | None = "set [history] enabled = true"
    elif not sampled:
        why = "give a [[sensors]] entry an update_interval"
    elif not permits(tool.name):
        why = "filtered out by [tools] allowed / denied"
    else:
        why = None
    description = (
        f"{tool.description} (in the service only, `clawseed-edge run`, which samples and "
        "keeps the history; `agent` and `chat` offer it once the history file exists)"
    )
    return [_row(tool.name, tool.risk.value, why, description, tool.parameters)]


def _row(
    name: str, risk: str, off_reason: str | None, description: str, parameters: Any
) -> dict[str, Any]:
    row: dict[str, Any] = {"name": name, "risk": risk, "enabled": off_reason is None}
    if off_reason is not None:
        row["off_reason"] = off_reason
    else:
        row["description"] = description
        row["parameters"] = parameters
    return row

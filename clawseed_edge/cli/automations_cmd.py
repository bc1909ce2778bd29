"""``clawseed-edge automations list|add|remove|firings|resume``: rules that act without the model.

``add`` and ``remove`` go to the running service over ``control.sock`` when one runs (it checks
the rule against its sensors, devices and tools and runs it at once); with no service running
they check the rule against the config (no hardware is opened) and write ``state.db``, where the
service finds it at its start. ``list`` and ``firings`` read the running service, else
``state.db``. ``resume`` lets the running service's rules act again after an emergency stop.
``[[automations]]`` in the config are synced into state.db when the service starts; remove
those in the file.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import time
from typing import Any

from .common import described, fail, load_from_args, run_async

__all__ = ["register"]

_NO_SERVICE = "no clawseed-edge service answers"


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "automations",
        help="rules on sensor readings and input events (list, add, remove, firings, resume)",
        description=described(__doc__),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    group = parser.add_subparsers(dest="automations_command", metavar="COMMAND")
    p = group.add_parser("list", help="the rules, their state and their latest firings")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_list)

    p = group.add_parser("add", help="add a rule (checked as [[automations]] is)")
    p.add_argument("name", help="a unique name: letters, digits, _ and -")
    p.add_argument("--when", required=True, help="e.g. 'greenhouse.temperature > 30', 'door.open'")
    p.add_argument("--for", dest="for_", default="0", help="how long it must hold, e.g. 2m")
    p.add_argument("--until", help="the reset condition, e.g. 'greenhouse.temperature < 28'")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--tool", help="call this tool when it fires (no model)")
    what.add_argument("--prompt", help="ask the model this when it fires (its own session)")
    what.add_argument("--message", help="send this notification when it fires")
    p.add_argument("--args", default="{}", metavar="JSON", help="the tool's arguments as JSON")
    p.add_argument(
        "--then", metavar="JSON", help='the action on reset, e.g. \'{"tool": "...", ...}\''
    )
    p.add_argument("--notify", default="", help="announce firings: phones, telegram, log")
    p.set_defaults(func=_add)

    p = group.add_parser("remove", help="remove a rule made by chat or the CLI, with its firings")
    p.add_argument("name")
    p.set_defaults(func=_remove)

    p = group.add_parser("firings", help="the latest firings, newest first")
    p.add_argument("name", nargs="?", help="only this rule")
    p.add_argument("--limit", type=int, default=20, help="at most this many (default 20)")
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.set_defaults(func=_firings)

    p = group.add_parser("resume", help="act again after an emergency stop")
    p.set_defaults(func=_resume)
    parser.set_defaults(func=lambda args: (parser.print_help(), 2)[1])


async def _service(loaded: Any, op: str, **arguments: Any) -> dict[str, Any] | None:
    """The running service's answer, or None when none runs.

    Raises:
        ControlError: The service answered with an error (its message says what is wrong).
    """
    from clawseed_edge.service import ControlError, control_path, control_request

    path = control_path(loaded.home)
    if not path.exists():
        return None
    try:
        return await control_request(path, op, timeout_s=10.0, **arguments)
    except ControlError as exc:
        if _NO_SERVICE in str(exc):
            return None
        raise


async def tell_service_automations(loaded: Any) -> bool:
    """Ask a running service to read the rules again; False when none runs."""
    from clawseed_edge.service import ControlError

    try:
        return await _service(loaded, "automations_changed") is not None
    except ControlError:
        return False


@contextlib.asynccontextmanager
async def _store(loaded: Any) -> Any:
    from clawseed_edge.scheduler.automation_store import AutomationStore
    from clawseed_edge.state import StateDB

    async with await StateDB.open(loaded.home / "state.db") as db:
        yield AutomationStore(db)


def _spec(args: argparse.Namespace) -> dict[str, Any]:
    """The rule the options describe, as an [[automations]] table.

    Raises:
        ValueError: --args or --then is not a JSON object.
    """
    spec: dict[str, Any] = {"name": args.name, "when": args.when, "for": args.for_}
    if args.until:
        spec["until"] = args.until
    if args.tool:
        arguments = _json_object(args.args, "--args")
        spec["do"] = {"tool": args.tool, "arguments": arguments}
    elif args.prompt:
        spec["do"] = {"prompt": args.prompt}
    elif args.message:
        spec["do"] = {"message": args.message}
    if args.then:
        spec["then"] = _json_object(args.then, "--then")
    places = [p.strip() for p in args.notify.split(",") if p.strip()]
    if places:
        spec["notify"] = places
    return spec


def _json_object(text: str, option: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise ValueError(f"{option}: {text[:60]!r} is not a JSON object")
    return value


async def _add_here(loaded: Any, spec: dict[str, Any]) -> str:
    """No service runs: check against the agent this config builds (no hardware opened)."""
    from clawseed_edge.agent.approval import StaticApprover
    from clawseed_edge.config.assembly import assemble
    from clawseed_edge.scheduler.automation_spec import known_names
    from clawseed_edge.scheduler.automation_tools import add_automation
    from clawseed_edge.scheduler.tools import check_tool_job

    async with await assemble(loaded, approver=StaticApprover(False), connect=False) as runtime:
        async with _store(loaded) as store:
            return await add_automation(
                store,
                spec,
                origin="cli",
                known=known_names(runtime.peripherals),
                check_tool=lambda n, a: check_tool_job(runtime.agent, n, a),
            )


def _add(args: argparse.Namespace) -> int:
    async def main() -> int:
        from clawseed_edge.api import ConfigInvalid
        from clawseed_edge.scheduler.automation_store import TooManyAutomations
        from clawseed_edge.service import ControlError

        loaded = load_from_args(args)
        try:
            spec = _spec(args)
            answer = await _service(loaded, "automation_add", spec=spec)
            words = answer["rule"] if answer is not None else await _add_here(loaded, spec)
        except (ValueError, ControlError, ConfigInvalid, TooManyAutomations) as exc:
            return fail(str(exc))
        print(f"added {args.name}: {words}")
        if answer is None:
            print("  (no service runs now; `clawseed-edge run` runs it)")
        return 0

    return run_async(args, main)


def _remove(args: argparse.Namespace) -> int:
    async def main() -> int:
        from clawseed_edge.service import ControlError

        loaded = load_from_args(args)
        try:
            answer = await _service(loaded, "automation_remove", name=args.name)
        except ControlError as exc:
            return fail(str(exc))
        if answer is None:
            async with _store(loaded) as store:
                entry = await store.get(args.name)
                if entry is None:
                    return fail(
                        f"no automation is named {args.name!r}; see `clawseed-edge automations list`"
                    )
                if entry.origin == "config":
                    return fail(
                        f"automation {args.name!r} is declared in {loaded.source} "
                        "([[automations]]); remove it there (it comes back at the next start)"
                    )
                await store.remove(args.name)
        print(f"removed {args.name}")
        return 0

    return run_async(args, main)


def _when(at: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(at))


def _firing_line(f: dict[str, Any]) -> str:
    outcome = "ok" if f.get("ok") else "refused/failed"
    detail = f": {str(f.get('detail', ''))[:200]}" if f.get("detail") else ""
    return f"{_when(f['at'])} {f['automation']} {f['event']}: {f['action']} {outcome}{detail}"


def _list(args: argparse.Namespace) -> int:
    async def main() -> int:
        loaded = load_from_args(args)
        answer = await _service(loaded, "automations")
        if answer is None:
            async with _store(loaded) as store:
                rules = await store.list()
                firings = [f.as_dict() for f in await store.firings(limit=20)][::-1]
            answer = {
                "automations": [
                    {"name": r.config.name, "when": r.config.when, "origin": r.origin}
                    for r in rules
                ],
                "paused": None,
                "firings": firings,
                "service": False,
            }
        answer.pop("ok", None)
        if args.json:
            print(json.dumps(answer, indent=2, ensure_ascii=False))
            return 0
        if not answer["automations"]:
            print("no automations; add one with `clawseed-edge automations add` or [[automations]]")
        for rule in answer["automations"]:
            state = "" if "active" not in rule else " (active)" if rule["active"] else " (waiting)"
            print(f"{rule['name']} ({rule.get('origin', 'config')}): when {rule['when']}{state}")
        if answer.get("paused"):
            print(f"paused: {answer['paused']} (clawseed-edge automations resume)")
        for f in answer["firings"]:
            print(f"  {_firing_line(f)}")
        return 0

    return run_async(args, main)


def _firings(args: argparse.Namespace) -> int:
    async def main() -> int:
        loaded = load_from_args(args)
        limit = max(1, min(args.limit, 1000))
        answer = await _service(loaded, "automation_firings", name=args.name, limit=limit)
        if answer is not None:
            firings = answer["firings"]
        else:
            async with _store(loaded) as store:
                firings = [f.as_dict() for f in await store.firings(args.name, limit=limit)]
        if not firings and not args.json:
            print("no firings yet")
        for f in firings:
            print(json.dumps(f, ensure_ascii=False) if args.json else _firing_line(f))
        return 0

    return run_async(args, main)


def _resume(args: argparse.Namespace) -> int:
    async def main() -> int:
        from clawseed_edge.config.paths import clawseed_home
        from clawseed_edge.service import control_request, find_control_socket

        answer = await control_request(
            find_control_socket(clawseed_home()), "automations_resume", timeout_s=10.0
        )
        print("automations resumed" if answer.get("resumed") else "automations were not paused")
        return 0

    return run_async(args, main)

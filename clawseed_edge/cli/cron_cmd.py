"""``clawseed-edge cron list|add|remove|runs|run-now|resume``: scheduled jobs in ``state.db``.

``list``, ``add``, ``remove`` and ``runs`` work on ``$CLAWSEED_HOME/state.db`` directly, whether
or not the service runs (a running service is told over ``control.sock`` to look again, so an
added job is scheduled at once). ``run-now`` asks the running service to run the job (it owns
the pins); with no service running it assembles the agent here and runs the job once, asking
for approvals on the terminal. ``resume`` lets the running service run jobs again after an
emergency stop paused its scheduler.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from dataclasses import replace
from typing import Any

from .common import add_runtime_options, fail, load_from_args, run_async

__all__ = ["register"]


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "cron",
        help="list, add, remove and run scheduled jobs",
        description="Scheduled jobs (docs/scheduler.md). Jobs live in $CLAWSEED_HOME/state.db; "
        "[[jobs]] in the config are synced there when the service starts.",
    )
    actions = parser.add_subparsers(dest="cron_command", metavar="ACTION", required=True)

    p = actions.add_parser("list", help="every job: schedule in words, next run, last result")
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.set_defaults(func=_list)

    p = actions.add_parser("add", help="add a job (one schedule, one action)")
    p.add_argument("name", help="a unique name: letters, digits, _ and -")
    when = p.add_mutually_exclusive_group(required=True)
    when.add_argument("--cron", metavar="EXPR", help="five fields, e.g. '0 7 * * *'")
    when.add_argument("--every", metavar="DURATION", help="an interval, e.g. 10m, 1h30m, 45s")
    when.add_argument("--at", metavar="TIME", help="once, local ISO time: 2026-12-24T18:00")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--prompt", metavar="TEXT", help="ask the agent this (its own session)")
    what.add_argument("--tool", metavar="NAME", help="call this tool directly, no model")
    what.add_argument("--shell", metavar="COMMAND", help="run this command (the shell tool)")
    p.add_argument("--args", metavar="JSON", default="{}", help="the tool's arguments as JSON")
    p.add_argument(
        "--deliver",
        default="log",
        help="where the result goes: log, memory, phones (comma separated)",
    )
    p.add_argument(
        "--missed",
        choices=("skip", "run_once"),
        default="skip",
        help="after downtime: skip the missed run or run it once (default skip)",
    )
    p.add_argument(
        "--yes",
        action="store_true",
        help="approve a shell job in supervised autonomy without asking",
    )
    p.set_defaults(func=_add)

    p = actions.add_parser("remove", help="remove a job and its run history")
    p.add_argument("name")
    p.set_defaults(func=_remove)

    p = actions.add_parser("runs", help="the latest runs, newest first")
    p.add_argument("name", nargs="?", help="only this job")
    p.add_argument("--limit", type=int, default=20, help="at most this many (default 20)")
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.set_defaults(func=_runs)

    p = actions.add_parser(
        "resume", help="run jobs again after an emergency stop paused the running service's"
    )
    p.set_defaults(func=_resume)

    p = actions.add_parser("run-now", help="run a job once now (through the running service)")
    p.add_argument("name")
    add_runtime_options(p)
    p.set_defaults(func=_run_now)


@contextlib.asynccontextmanager
async def _store(loaded: Any) -> Any:
    from clawseed_edge.scheduler import JobStore
    from clawseed_edge.state import StateDB

    async with await StateDB.open(loaded.home / "state.db") as db:
        yield JobStore(db, max_jobs=loaded.config.scheduler.max_jobs)


def _zone(loaded: Any) -> Any:
    from clawseed_edge.scheduler import zone_named

    return zone_named(loaded.config.scheduler.timezone)


async def tell_service(loaded: Any) -> bool:
    """Ask a running service to look at the jobs again; False when none runs."""
    from clawseed_edge.service import ControlError, control_path, control_request

    path = control_path(loaded.home)
    if not path.exists():
        return False
    try:
        await control_request(path, "cron_changed", timeout_s=3.0)
    except ControlError:
        return False
    return True


def _list(args: argparse.Namespace) -> int:
    async def main() -> int:
        from clawseed_edge.scheduler.schedule import format_local

        loaded = load_from_args(args)
        zone = _zone(loaded)
        async with _store(loaded) as store:
            jobs = await store.list()
            lasts = {j.name: await store.runs(j.name, limit=1) for j in jobs}
        if not jobs and not args.json:
            print("no jobs; add one with `clawseed-edge cron add` or [[jobs]] in the config")
        for job in jobs:
            last = lasts[job.name][0] if lasts[job.name] else None
            row = {
                "name": job.name,
                "schedule": job.schedule.describe(zone),
                "action": job.summary(),
                "deliver": list(job.deliver),
                "missed": job.missed,
                "enabled": job.enabled,
                "origin": job.origin,
                "next_run": format_local(job.next_run, zone) if job.next_run else None,
                "last": last.status if last else None,
            }
            if args.json:
                print(json.dumps(row, ensure_ascii=False))
                continue
            flag = "" if job.enabled else " [disabled]"
            print(f"{job.name}{flag} ({job.origin}): {row['schedule']}")
            print(f"  {row['action']} -> {', '.join(job.deliver)}; missed: {job.missed}")
            print(f"  next: {row['next_run'] or 'none'}; last: {row['last'] or 'never ran'}")
        return 0

    return run_async(args, main)


def _add(args: argparse.Namespace) -> int:
    async def main() -> int:
        from clawseed_edge.scheduler import Job, Schedule
        from clawseed_edge.scheduler.schedule import describe_runs

        loaded = load_from_args(args)
        zone = _zone(loaded)
        try:
            arguments = json.loads(args.args)
            if not isinstance(arguments, dict):
                raise ValueError("not an object")
        except ValueError:
            return fail(
                f"--args: {args.args[:60]!r} is not a JSON object; e.g. "
                '\'{"device": "porch_light", "on": false}\''
            )
        kind, value = next(
            (k, getattr(args, k)) for k in ("cron", "every", "at") if getattr(args, k) is not None
        )
        now = time.time()
        try:
            schedule = Schedule.parse(kind, value)
            job = Job.build(
                args.name,
                schedule,
                prompt=args.prompt,
                tool=args.tool,
                arguments=arguments if args.tool else None,
                shell=args.shell,
                deliver=[p.strip() for p in args.deliver.split(",") if p.strip()],
                missed=args.missed,
                origin="cli",
                created_at=now,
            )
        except ValueError as exc:
            return fail(str(exc))
        if kind == "at" and schedule.once_at(zone) <= now:
            return fail(f"--at: {value} has passed; give a time in the future")
        if args.tool:
            problem = await _tool_problem(loaded, args.tool, arguments)
            if problem is not None:
                return fail(problem)
        if args.shell:
            refused = _refuse_shell(loaded, args.shell, args.yes)
            if refused is not None:
                return fail(refused)
        job = replace(job, next_run=schedule.first_run(now, zone, now))
        async with _store(loaded) as store:
            if not await store.add(job):
                return fail(
                    f"a job named {job.name!r} exists; remove it first or pick another name"
                )
        shown = describe_runs(schedule, zone, now, now)
        print(f"added {job.name}: {job.summary()}")
        print(f"  {shown['schedule']}")
        for run in shown["next_runs"]:
            print(f"  next: {run}")
        if not await tell_service(loaded):
            print("  (no service runs now; `clawseed-edge run` runs it)")
        return 0

    return run_async(args, main)


async def _tool_problem(loaded: Any, tool: str, arguments: dict[str, Any]) -> str | None:
    """Why the agent this config builds could never run ``tool(arguments)``, or None.

    The agent is assembled without connecting any hardware, as ``tools list`` does.
    """
    from clawseed_edge.agent.approval import StaticApprover
    from clawseed_edge.config.assembly import assemble
    from clawseed_edge.scheduler.tools import check_tool_job

    async with await assemble(loaded, approver=StaticApprover(False), connect=False) as runtime:
        try:
            check_tool_job(runtime.agent, tool, arguments)
        except ValueError as exc:
            return f"--tool {tool[:64]}: {exc}"
    return None


def _refuse_shell(loaded: Any, command: str, yes: bool) -> str | None:
    """Why a shell job may not be added (read-only, allowlist, no approval), or None."""
    from clawseed_edge.agent.access import check_command

    autonomy = loaded.config.autonomy
    if autonomy.level == "read_only":
        return "autonomy is read_only: no shell job can be scheduled"
    reason, _words = check_command(command, autonomy.shell_allowlist)
    if reason is not None:
        return reason
    if autonomy.level == "supervised" and not yes:
        if not sys.stdin.isatty():
            return (
                "a shell job needs approval in supervised autonomy; run it on a terminal "
                "to be asked, or pass --yes"
            )
        answer = input(f"schedule the shell command `{command}` to run unattended? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            return "not approved; nothing was added"
    return None


def _remove(args: argparse.Namespace) -> int:
    async def main() -> int:
        loaded = load_from_args(args)
        async with _store(loaded) as store:
            job = await store.get(args.name)
            if job is None:
                return fail(f"no job is named {args.name!r}; see `clawseed-edge cron list`")
            if job.origin == "config":
                return fail(
                    f"job {args.name!r} is declared in {loaded.source} ([[jobs]]); "
                    "remove it there (it comes back at the next start otherwise)"
                )
            await store.remove(args.name)
        await tell_service(loaded)
        print(f"removed {args.name}")
        return 0

    return run_async(args, main)


def _runs(args: argparse.Namespace) -> int:
    async def main() -> int:
        loaded = load_from_args(args)
        zone = _zone(loaded)
        async with _store(loaded) as store:
            runs = await store.runs(args.name, limit=args.limit)
            if not runs and args.name and await store.get(args.name) is None:
                return fail(f"no job is named {args.name!r}; see `clawseed-edge cron list`")
        if not runs and not args.json:
            print("no runs yet")
        for run in runs:
            if args.json:
                print(json.dumps(_run_row(run), ensure_ascii=False))
                continue
            from datetime import datetime  # every command imports this module: keep it light

            started = datetime.fromtimestamp(run.started_at, zone).strftime("%Y-%m-%d %H:%M:%S")
            took = f" in {run.finished_at - run.started_at:.1f} s" if run.finished_at else ""
            detail = run.error or run.output
            print(
                f"{started} {run.job}: {run.status}{took}" + (f": {detail[:200]}" if detail else "")
            )
        return 0

    return run_async(args, main)


def _run_row(run: Any) -> dict[str, Any]:
    return {
        "id": run.id,
        "job": run.job,
        "scheduled_for": run.scheduled_for,
        "started_at": run.started_at,
        "finished_at": run.finished_at,
        "status": run.status,
        "output": run.output,
        "error": run.error,
    }


def _run_now(args: argparse.Namespace) -> int:
    async def main() -> int:
        from clawseed_edge.service import ControlError, control_path, control_request

        loaded = load_from_args(args)
        path = control_path(loaded.home)
        if path.exists():
            try:
                answer = await control_request(
                    path, "cron_run_now", name=args.name, timeout_s=600.0
                )
            except ControlError as exc:
                if "no clawseed-edge service answers" not in str(exc):
                    return fail(str(exc))
            else:
                return _show_run(answer["run"])
        return _show_run(_run_row(await _run_here(args, loaded)))

    return run_async(args, main)


async def _run_here(args: argparse.Namespace, loaded: Any) -> Any:
    """No service runs: assemble the agent in this process and run the job once."""
    from clawseed_edge.scheduler import scheduler_for
    from clawseed_edge.state import StateDB

    from .common import open_runtime

    async with await open_runtime(args) as runtime:
        async with await StateDB.open(loaded.home / "state.db") as db:
            scheduler = await scheduler_for(runtime, db)
            return await scheduler.run_now(args.name)


def _resume(args: argparse.Namespace) -> int:
    from .status_cmd import ask

    async def main() -> int:
        answer = await ask("cron_resume")
        if answer.get("resumed"):
            print("the scheduler runs jobs again (runs due while it was paused were skipped)")
        else:
            print("the scheduler was not paused; nothing to do")
        return 0

    return run_async(args, main)


def _show_run(run: dict[str, Any]) -> int:
    if run["status"] == "ok":
        print(run["output"])
        return 0
    return fail(f"job {run['job']} {run['status']}: {run['error']}")

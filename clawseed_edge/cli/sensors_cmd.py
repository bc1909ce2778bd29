"""``clawseed-edge sensors list`` and ``sensors history NAME``: the configured sensors and what
the service recorded of them.

``history`` reads ``$CLAWSEED_HOME/history.db`` directly (the service writes it in batches
every few seconds, so the newest values may lag by that much); it works while the service runs
and after it stopped. Windows: ``--since 10m`` / ``24h`` / ``7d`` / ``"last night"``, or
``--from 2026-12-01T22:00 --to 2026-12-02T07:00`` (local time).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from .common import described, fail, load_from_args, run_async

__all__ = ["register"]

#: Points ``history`` prints at most (``--points``).
MAX_POINTS = 2000


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "sensors",
        help="the configured sensors and their recorded history",
        description=described(__doc__),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    group = parser.add_subparsers(dest="sensors_command", metavar="COMMAND")
    p_list = group.add_parser("list", help="each sensor: driver, interval, filters, last values")
    p_list.add_argument("--json", action="store_true", help="print JSON")
    p_list.set_defaults(func=_list)
    p_hist = group.add_parser("history", help="min/max/mean/last and points over a window")
    p_hist.add_argument("name", help="the sensor's name")
    p_hist.add_argument("--quantity", "-q", help="temperature, humidity ... (default: all)")
    p_hist.add_argument("--since", default=None, help="10m, 24h, 7d, 'last night' (default 24h)")
    p_hist.add_argument("--from", dest="start", help="ISO 8601 local time (or Unix seconds)")
    p_hist.add_argument(
        "--to", dest="end", help="ISO 8601 local time or Unix seconds (default: now)"
    )
    p_hist.add_argument("--points", type=int, default=24, help=f"points (1..{MAX_POINTS})")
    out = p_hist.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print JSON")
    out.add_argument("--csv", action="store_true", help="print the points as CSV")
    p_hist.set_defaults(func=_history)
    parser.set_defaults(func=lambda args: (parser.print_help(), 2)[1])


def _unknown_sensor(name: str, configured: list[str]) -> str:
    names = ", ".join(configured) if configured else "none ([[sensors]] in the config adds one)"
    return (
        f"no sensor named {name[:64]!r}; configured sensors: {names} "
        "— see `clawseed-edge sensors list`"
    )


def _no_history_yet(name: str, interval_s: float | None) -> str:
    if interval_s is None:
        return (
            f"no history yet for {name!r}: it is read only on demand; give it an "
            'update_interval (e.g. update_interval = "60s") and the service records it'
        )
    return (
        f"no history yet for {name!r}: the service records it every {interval_s:g}s while it "
        "runs (`clawseed-edge run`); nothing is stored yet"
    )


def _valid_sensors(args: argparse.Namespace) -> list[Any]:
    from clawseed_edge.peripherals.sensors.config import validate_sensors
    from clawseed_edge.peripherals.sensors.registry import default_driver_registry

    loaded = load_from_args(args)
    config = loaded.config
    return [
        v
        for v in validate_sensors(
            config.sensors, [], default_driver_registry(), source=loaded.source or "config"
        )
        if not v.display
    ]


async def _open_history(args: argparse.Namespace) -> Any:
    from clawseed_edge.config.paths import clawseed_home
    from clawseed_edge.service.recorder import HISTORY_FILE
    from clawseed_edge.state import SensorHistory

    path = clawseed_home() / HISTORY_FILE
    if not path.exists():
        return None
    return await SensorHistory.open(path)


def _list(args: argparse.Namespace) -> int:
    async def main() -> int:

        sensors = _valid_sensors(args)
        history = await _open_history(args)
        rows = []
        try:
            for v in sensors:
                cfg = v.config
                row: dict[str, Any] = {
                    "name": v.name,
                    "driver": cfg.driver,
                    "update_interval": "never" if v.interval_s is None else f"{v.interval_s:g}s",
                    "quantities": {q.name: q.unit for q in v.driver.quantities},
                    "filters": len(cfg.filters)
                    + sum(len(f) for f in cfg.quantity_filters.values()),
                    "last": {},
                }
                if history is not None:
                    now = time.time()
                    for q in row["quantities"]:
                        s = await history.summary(v.name, q, now - 86400 * 2, now, points=1)
                        if s is not None and s.last is not None:
                            row["last"][q] = {"value": s.last, "time": s.last_time}
                rows.append(row)
        finally:
            if history is not None:
                await history.aclose()
        if args.json:
            print(json.dumps(rows, indent=2, ensure_ascii=False))
            return 0
        if not rows:
            print("no [[sensors]] in the config")
        for row in rows:
            measures = ", ".join(f"{q} ({u})" for q, u in row["quantities"].items())
            print(f"{row['name']}: {row['driver']}, every {row['update_interval']}: {measures}")
            if row["filters"]:
                print(f"  filters: {row['filters']}")
            for q, last in row["last"].items():
                when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(last["time"]))
                print(f"  last {q}: {last['value']:g} {row['quantities'][q]} at {when}")
        return 0

    return run_async(args, main)


def _history(args: argparse.Namespace) -> int:
    async def main() -> int:

        from clawseed_edge.api import ToolArgumentsInvalid
        from clawseed_edge.tools.sensor_history import format_summary, parse_window

        if not 1 <= args.points <= MAX_POINTS:
            return fail(f"--points: 1..{MAX_POINTS}", 2)
        now = time.time()
        try:
            start, end, label = parse_window(args.since, args.start, args.end, now=now)
        except ToolArgumentsInvalid as exc:
            return fail(str(exc), 2)
        configured = {v.name: v for v in _valid_sensors(args)}
        history = await _open_history(args)
        try:
            stored = []
            if history is not None:
                stored = [q for s, q, _ in await history.series() if s == args.name]
            if args.name not in configured and not stored:
                return fail(_unknown_sensor(args.name, sorted(configured)))
            if not stored:
                return fail(_no_history_yet(args.name, configured[args.name].interval_s))
            if args.name not in configured:  # removed from the config since: its history stays
                print(
                    f"{args.name!r} is no longer in the config; showing its stored history",
                    file=sys.stderr,
                )
            if args.quantity:
                if args.quantity not in stored:
                    return fail(
                        f"{args.name} has no history of {args.quantity!r}; it has {', '.join(stored)}"
                    )
                stored = [args.quantity]
            summaries = [
                await history.summary(args.name, q, start, end, points=args.points, now=now)
                for q in stored
            ]
        finally:
            if history is not None:
                await history.aclose()
        found = [s for s in summaries if s is not None]
        if args.json:
            print(json.dumps([s.as_dict() for s in found], indent=2, ensure_ascii=False))
        elif args.csv:
            import csv  # only for --csv

            writer = csv.writer(sys.stdout)
            writer.writerow(["sensor", "quantity", "unit", "time", "iso_time", "value"])
            for s in found:
                for t, v in s.points:
                    iso = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(t))
                    writer.writerow([s.sensor, s.quantity, s.unit, f"{t:.3f}", iso, f"{v:.6g}"])
        else:
            for s in found:
                print(format_summary(s, label))
        return 0

    return run_async(args, main)

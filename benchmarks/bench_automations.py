"""What evaluating the automations costs per reading, against a bare comparison doing the same work.

A stream of readings (a seeded random walk around 25 °C over ``--sensors`` sensors, one sensor
per reading) goes through :class:`~clawseed_edge.scheduler.automations.Automations`: ``observe``
then ``evaluate`` for each reading, ``--rules`` rules (``sK.temperature > 30`` for 1 minute,
until ``sK.temperature < 28``, a message action with nowhere to go). The baseline does the same
work by hand on the same readings: keeps the latest value per name in a dict and, for every rule
on every reading, makes the one comparison the rule makes (its ``when`` while waiting, its
``until`` while active) with a bare ``for``/hysteresis state in two lists. Both are warmed with
one pass and run ``--runs`` times, alternating which goes first; the medians of wall time and of
process CPU time per reading are printed, and their ratio. The number of comparisons each makes
is counted once and printed (they must be equal).

Run: ``python benchmarks/bench_automations.py [--runs 9] [--rules 20] [--sensors 10]
[--readings 5000]``
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import time
from typing import Any

import msgspec

from clawseed_edge.api import SensorReading
from clawseed_edge.config.automations import AutomationConfig
from clawseed_edge.scheduler import rules as rules_module
from clawseed_edge.scheduler.automation_spec import validate_automations
from clawseed_edge.scheduler.automations import Automations

FOR_S = 60.0


def readings(sensors: int, count: int) -> list[SensorReading]:
    """A seeded random walk, 10 s apart, crossing 30 and 28 °C now and then."""
    rng = random.Random(7)
    temps = [25.0] * sensors
    out = []
    for i in range(count):
        k = i % sensors
        temps[k] = min(40.0, max(10.0, temps[k] + rng.uniform(-0.8, 0.8)))
        out.append(SensorReading("b", f"s{k}", {"temperature": temps[k]}, {}, i * 10.0))
    return out


def automations(rules: int, sensors: int) -> Automations:
    tables = [
        {
            "name": f"r{i}",
            "when": f"s{i % sensors}.temperature > 30",
            "for": "1m",
            "until": f"s{i % sensors}.temperature < 28",
            "do": {"message": "hot"},
        }
        for i in range(rules)
    ]
    config = msgspec.convert(tables, list[AutomationConfig])
    return Automations(None, validate_automations(config), clock=lambda: 0.0)


async def run_rules(auto: Automations, stream: list[SensorReading]) -> int:
    fired = 0
    for r in stream:
        auto.observe(r)
        fired += len(await auto.evaluate(r.time))
    return fired


def run_bare(rules: int, sensors: int, stream: list[SensorReading]) -> int:
    names = [f"s{i % sensors}.temperature" for i in range(rules)]
    active = [False] * rules
    since: list[float | None] = [None] * rules
    values: dict[str, float] = {}
    fired = 0
    for r in stream:
        for q, v in r.values.items():
            values[f"{r.sensor}.{q}"] = float(v)
        now = r.time
        for i in range(rules):
            v = values.get(names[i])
            if active[i]:
                if v is not None and v < 28:
                    active[i], since[i] = False, None
                    fired += 1
            elif v is not None and v > 30:
                if since[i] is None:
                    since[i] = now
                if now - since[i] >= FOR_S:  # type: ignore[operator]
                    active[i] = True
                    fired += 1
            else:
                since[i] = None
    return fired


def count_comparisons(rules: int, sensors: int, stream: list[SensorReading]) -> int:
    """How many comparisons the rules make on ``stream`` (the baseline makes one per rule per
    reading, the same)."""
    count = 0
    real = rules_module._eval

    def counting(node: Any, lookup: Any) -> bool:
        nonlocal count
        if node[0] in ("cmp", "is"):
            count += 1
        return real(node, lookup)

    rules_module._eval = counting  # type: ignore[assignment]
    try:
        asyncio.run(run_rules(automations(rules, sensors), stream))
    finally:
        rules_module._eval = real
    return count


def main(runs: int, rules: int, sensors: int, count: int) -> None:
    stream = readings(sensors, count)
    comparisons = count_comparisons(rules, sensors, stream)
    loop = asyncio.new_event_loop()
    fired_rules = loop.run_until_complete(run_rules(automations(rules, sensors), stream))  # warm
    fired_bare = run_bare(rules, sensors, stream)  # warm
    assert fired_rules == fired_bare, (fired_rules, fired_bare)
    wall: dict[str, list[float]] = {"rules": [], "bare": []}
    cpu: dict[str, list[float]] = {"rules": [], "bare": []}
    for i in range(runs):
        for mode in ("rules", "bare") if i % 2 == 0 else ("bare", "rules"):
            auto = automations(rules, sensors)
            w0, c0 = time.perf_counter(), time.process_time()
            if mode == "rules":
                loop.run_until_complete(run_rules(auto, stream))
            else:
                run_bare(rules, sensors, stream)
            wall[mode].append((time.perf_counter() - w0) / count * 1e6)
            cpu[mode].append((time.process_time() - c0) / count * 1e6)
    loop.close()
    w = {m: statistics.median(v) for m, v in wall.items()}
    c = {m: statistics.median(v) for m, v in cpu.items()}
    print(
        f"automations: {rules} rules, {sensors} sensors, {count} readings, {runs} runs; "
        f"{fired_rules} firings; comparisons: {comparisons} (bare: {rules * count})"
    )
    print(f"  automations  wall {w['rules']:8.2f} us/reading   cpu {c['rules']:8.2f} us/reading")
    print(f"  bare         wall {w['bare']:8.2f} us/reading   cpu {c['bare']:8.2f} us/reading")
    print(
        f"  ratio        wall {w['rules'] / w['bare']:8.1f} x            "
        f"cpu {c['rules'] / c['bare']:8.1f} x"
    )
    print(
        f"  per rule     cpu {c['rules'] / rules:8.3f} us (automations), "
        f"{c['bare'] / rules:.3f} us (bare)"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--rules", type=int, default=20)
    parser.add_argument("--sensors", type=int, default=10)
    parser.add_argument("--readings", type=int, default=5000)
    args = parser.parse_args()
    main(args.runs, args.rules, args.sensors, args.readings)

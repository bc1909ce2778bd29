"""Dataclasses built at the gateway's start-up, and the CPU they cost.

Python 3.11 compiles each dataclass's generated methods (``__init__``, ``__repr__``, ``__eq__``,
and for a frozen one ``__hash__``, ``__setattr__``, ``__delattr__``) from source at every start:
about 1 ms CPU per frozen class on the benchmark machine, bytecode or not. This counts the
dataclasses that importing the ``gateway --sim`` path builds, and times them.

Each interpreter given (``--python``, repeatable; default: this one) imports the modules that
``clawseed-edge gateway --sim`` imports before READY, in a fresh process, ``--runs`` times;
medians are printed per interpreter, so an older checkout's venv is the baseline in the same
run: ``python benchmarks/bench_start_classes.py --python ../old/.venv/bin/python --python
.venv/bin/python``. CPU is ``time.process_time``; the import CPU is all of it, the dataclass
CPU the part spent in ``dataclasses._process_class``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile

CHILD = r"""
import collections, dataclasses, importlib, json, time
original = dataclasses._process_class
spent = collections.Counter()
count = collections.Counter()

def timed(cls, *args, **kwargs):
    started = time.process_time()
    try:
        return original(cls, *args, **kwargs)
    finally:
        top = cls.__module__.split(".")[0]
        spent[top] += time.process_time() - started
        count[top] += 1

dataclasses._process_class = timed
started = time.process_time()
from clawseed_edge.cli.main import build_parser
try:
    build_parser(["gateway", "--sim"])
except TypeError:  # before the one-command parser
    build_parser()
for name in (
    "clawseed_edge.cli.run_cmd", "clawseed_edge.config.file", "clawseed_edge.config.assembly",
    "clawseed_edge.service.process", "clawseed_edge.channels.gateway.app",
    "clawseed_edge.channels.gateway.server", "uvicorn", "gpiozero.pins.mock",
):
    importlib.import_module(name)
print(json.dumps({
    "import_ms": (time.process_time() - started) * 1000,
    "ours": count["clawseed_edge"], "ours_ms": spent["clawseed_edge"] * 1000,
    "all": sum(count.values()), "all_ms": sum(spent.values()) * 1000,
}))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", action="append", help="interpreter (repeatable)")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    pythons = args.python or [sys.executable]
    results: dict[str, list[dict[str, float]]] = {p: [] for p in pythons}
    with tempfile.TemporaryDirectory() as cwd:  # not a checkout: each imports its own package
        for _ in range(args.runs):  # interleaved: load drifts hit every interpreter alike
            for python in pythons:
                out = subprocess.run(
                    [python, "-c", CHILD],
                    capture_output=True, text=True, timeout=120, check=True, cwd=cwd,
                )  # fmt: skip
                results[python].append(json.loads(out.stdout.strip().splitlines()[-1]))
    print(f"medians over {args.runs} runs (CPU ms, time.process_time)")
    print(f"{'interpreter':44} {'import':>8} {'dataclasses':>12} {'CPU':>8} {'ours':>6} {'CPU':>8}")
    for python, rows in results.items():
        m = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
        print(
            f"{python[-44:]:44} {m['import_ms']:8.1f} {m['all']:12.0f} {m['all_ms']:8.1f}"
            f" {m['ours']:6.0f} {m['ours_ms']:8.1f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Idle cost of the service: time from exec to ready, and RSS once idle.

Starts ``python -m clawseed_edge run --sim`` in a fresh process, times it from exec to its
start-up line (``clawseed-edge running: ...``, printed once everything listens), reads VmRSS
from ``/proc/PID/status`` after ``--idle-s`` seconds, stops it with SIGTERM. Two configs: Ollama
configured (pointed at a closed port: the background probe fails fast, as with no server
running) and the embedded default (demo model). Baseline in the same run: a bare
``python -c "import starlette, uvicorn"`` process measured the same way.

Run: ``python benchmarks/bench_idle_imports.py [--runs 5] [--idle-s 3]``; prints medians and
ratios against the baseline. Linux only (``/proc``). Every process runs with
``PYTHONOPTIMIZE=2``, as the systemd unit runs the service; ``--optimize 0`` as the CLI runs.
It first says whether the code had up-to-date bytecode (``bytecode_state.py``).
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

READY_LINE = "clawseed-edge running"
BASELINE = (
    "import starlette, uvicorn, sys; print('baseline running', file=sys.stderr, flush=True); "
    "import time; time.sleep(600)"
)


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def measure(argv: list[str], env: dict[str, str], ready: str, idle_s: float) -> tuple[float, float]:
    """(seconds from exec to the ready line, RSS in MB after ``idle_s`` more seconds)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            text=True)  # fmt: skip
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            if ready in line:
                break
        else:
            raise RuntimeError(f"{argv} ended before {ready!r} (exit {proc.wait()})")
        to_ready = time.perf_counter() - start
        time.sleep(idle_s)
        rss = _rss_mb(proc.pid)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return to_ready, rss


def main() -> None:
    from bytecode_state import add_optimize_option, bytecode_line

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--idle-s", type=float, default=3.0, help="seconds idle before RSS")
    add_optimize_option(parser)
    args = parser.parse_args()

    print(bytecode_line(), flush=True)  # start-up cost depends on it: say which case ran
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "ollama.toml"
        config.write_text(
            f'[provider]\nname = "ollama"\nmodel = "qwen2.5:3b"\n'
            f'base_url = "http://127.0.0.1:{_closed_port()}"\n',
            encoding="utf-8",
        )
        env = {
            **os.environ,
            "CLAWSEED_HOME": str(Path(tmp) / "home"),
            "PYTHONOPTIMIZE": str(args.optimize),
        }
        env.pop("PYTHONDEVMODE", None)
        service = [sys.executable, "-m", "clawseed_edge"]
        cases = {
            "baseline: import starlette, uvicorn": (
                [sys.executable, "-c", BASELINE],
                "baseline running",
            ),
            "run --sim, Ollama configured": (
                [*service, "--config", str(config), "run", "--sim"],
                READY_LINE,
            ),
            "run --sim, embedded default": ([*service, "run", "--sim"], READY_LINE),
        }
        results: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
        for _ in range(args.runs):  # interleaved, so drift on a shared machine hits all alike
            for name, (argv, ready) in cases.items():
                results[name].append(measure(argv, env, ready, args.idle_s))

    base_t = statistics.median(t for t, _ in results["baseline: import starlette, uvicorn"])
    base_m = statistics.median(m for _, m in results["baseline: import starlette, uvicorn"])
    print(
        f"{args.runs} runs, RSS after {args.idle_s:g} s idle, PYTHONOPTIMIZE={args.optimize}; "
        "medians"
    )
    print(f"{'case':<38} {'to ready':>9} {'ratio':>6} {'idle RSS':>9} {'ratio':>6}")
    for name, rows in results.items():
        t = statistics.median(r[0] for r in rows)
        m = statistics.median(r[1] for r in rows)
        print(f"{name:<38} {t:>7.2f} s {t / base_t:>6.2f} {m:>6.1f} MB {m / base_m:>6.2f}")


if __name__ == "__main__":
    main()

"""Time and CPU to READY=1 of ``clawseed-edge gateway --sim``, for one or more venvs side by side.

Each run executes ``VENV/bin/clawseed-edge gateway --sim`` (Ollama configured at a closed port,
one simulated LED, a fresh ``CLAWSEED_HOME``) with ``NOTIFY_SOCKET`` bound here, and records
the wall time from exec to ``READY=1``, the process's CPU time (user + system, all threads,
from ``/proc/PID/stat``) at that moment, and its RSS ``--idle-s`` seconds later. Nothing polls
the process while it starts (``bench_service_ready.py`` polls ``/health`` every 5 ms, which
takes CPU from a 2-core machine). Runs are interleaved across the venvs, so an older
checkout's venv measured in the same run is the baseline; medians are printed.

Run from outside a checkout (the venvs' own packages must be imported, not the current
directory's): ``cd /tmp && python /path/benchmarks/bench_ready_cpu.py --runs 12 --idle-s 4
OLD/.venv NEW/.venv``. Linux only. The gateways run with ``PYTHONOPTIMIZE=2``, as the systemd
unit runs the service (``--optimize 0``: as the CLI runs). It first says whether each venv's
code had bytecode.
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
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_service_ready import CONFIG, STEP_TIMEOUT_S, cpu_s, free_port, rss_mb
from bytecode_state import add_optimize_option


def measure(venv: Path, idle_s: float, optimize: int = 2) -> tuple[float, float, float]:
    """(wall s to READY=1, CPU s at READY=1, RSS MB ``idle_s`` later) of one start."""
    with tempfile.TemporaryDirectory() as home:
        Path(home, "config.toml").write_text(
            CONFIG.format(url=f"http://127.0.0.1:{free_port()}", port=free_port()), "utf-8"
        )
        name = f"bench-ready-cpu-{uuid.uuid4().hex}"
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as notify:
            notify.bind("\0" + name)
            notify.settimeout(STEP_TIMEOUT_S)
            env = {
                **os.environ,
                "CLAWSEED_HOME": home,
                "NOTIFY_SOCKET": "@" + name,
                "PYTHONOPTIMIZE": str(optimize),
            }
            for unset in ("WATCHDOG_USEC", "WATCHDOG_PID", "PYTHONDEVMODE"):
                env.pop(unset, None)
            started = time.perf_counter()
            proc = subprocess.Popen(
                [str(venv / "bin" / "clawseed-edge"), "gateway", "--sim"],
                env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )  # fmt: skip
            try:
                while b"READY=1" not in notify.recv(4096):
                    pass
                wall, cpu = time.perf_counter() - started, cpu_s(proc.pid)
                time.sleep(idle_s)
                rss = rss_mb(proc.pid)
            finally:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
    return wall, cpu, rss


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("venvs", nargs="+", type=Path, help="venv directories to compare")
    parser.add_argument("--runs", type=int, default=12)
    parser.add_argument("--idle-s", type=float, default=4.0, help="seconds after READY for RSS")
    add_optimize_option(parser)
    args = parser.parse_args()
    for venv in args.venvs:
        line = subprocess.run(
            [str(venv / "bin" / "python"), "-c", "from bytecode_state import bytecode_line; "
             "print(bytecode_line())"],
            capture_output=True, text=True, cwd=Path(__file__).parent, timeout=120,
        ).stdout.strip()  # fmt: skip
        print(f"{venv}: {line or 'bytecode: unknown'}", flush=True)
    results: dict[Path, list[tuple[float, float, float]]] = {v: [] for v in args.venvs}
    for _ in range(args.runs):  # interleaved: load drifts hit every venv alike
        for venv in args.venvs:
            results[venv].append(measure(venv, args.idle_s, args.optimize))
    print(f"medians over {args.runs} runs; RSS {args.idle_s:g} s after READY=1")
    print(f"{'venv':44} {'to READY':>9} {'CPU':>8} {'idle RSS':>9}")
    for venv, rows in results.items():
        wall, cpu, rss = (statistics.median(r[i] for r in rows) for i in range(3))
        print(f"{str(venv)[-44:]:44} {wall:7.3f} s {cpu:6.3f} s {rss:6.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Every benchmark still runs: each script once, with the smallest arguments it takes.

The figures in the README and docs say "rerun with ...": a benchmark that no longer runs (a
query it copies went stale, an odd ``--n`` it did not expect) makes them unverifiable. Nothing
here reads a figure; only that the script finishes and prints its table.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"

pytestmark = pytest.mark.local_intents  # the scripts measure the configured defaults

#: (script, smallest arguments). Every script in benchmarks/ must be listed (checked below).
RUNS: list[tuple[str, list[str]]] = [
    ("bench_automations.py", ["--runs", "1", "--readings", "200"]),
    ("bench_camera.py", ["--runs", "1", "--idle-s", "0.5", "--frames", "3"]),
    ("bench_call_checks.py", ["--rounds", "1", "--calls", "10"]),
    ("bench_engine.py", ["--repeats", "1", "--turns", "5", "--calls", "5"]),
    ("bench_gateway.py", ["--clients", "2", "--turns", "2", "--repeats", "1"]),
    ("bench_hardware_turn.py", ["--n", "5", "--rounds", "1"]),
    ("bench_history.py", ["--days", "3", "--sensors", "1", "--n", "2"]),
    ("bench_idle_imports.py", ["--runs", "1", "--idle-s", "0.5"]),
    (
        "bench_idle_wakeups.py",
        [
            *("--rounds", "1", "--window-s", "2", "--settle-s", "0.5", "--changes", "1"),
            # Any program stands for the other runtime: a stdlib HTTP server on a free port.
            "--vs-command",
            f"{shlex.quote(sys.executable)} -m http.server {{port}} --bind 127.0.0.1",
            "--vs-ready-url",
            "http://127.0.0.1:{port}/",
        ],
    ),
    ("bench_mcp.py", ["--runs", "1", "--idle-s", "0.5", "--calls", "5"]),
    ("bench_local_intents.py", ["--rounds", "1"]),
    ("bench_memory.py", ["--sizes", "100", "--queries", "5"]),
    ("bench_mqtt_fleet.py", ["--nodes", "2", "--calls", "5"]),
    ("bench_mqtt_idle.py", ["--runs", "1", "--idle-s", "0.5"]),
    (
        "bench_pi_zero.py",
        ["--runs", "1", "--idle-s", "0.5", "--window-s", "1", "--turns", "2", "--samples", "50"],
    ),
    ("bench_pi_zero.py", ["--increments", "--runs", "1", "--idle-s", "0.5"]),
    ("bench_pin_latency.py", ["--n", "10"]),
    ("bench_provider_imports.py", ["--runs", "1"]),
    ("bench_ready_cpu.py", ["--runs", "1", "--idle-s", "0.5", sys.prefix]),
    ("bench_scheduler_drift.py", ["--seconds", "1"]),
    ("bench_sensor_read.py", ["--n", "5"]),
    ("bench_serial_roundtrip.py", ["--n", "5"]),
    ("bench_service_ready.py", ["--runs", "1", "--idle-s", "0.5", "--turns", "1"]),
    ("bench_sessions.py", ["--sizes", "10", "--runs", "1"]),
    ("bench_small_model.py", ["--limit", "1"]),
    ("bench_start_classes.py", ["--runs", "1"]),
    ("bench_telegram.py", ["--rounds", "1", "--idle-s", "0.5", "--turns", "2"]),
]
#: Helpers the benchmarks import, not benchmarks of their own.
NOT_BENCHMARKS = {"bytecode_state.py"}


def test_every_benchmark_is_listed() -> None:
    scripts = {p.name for p in BENCHMARKS.glob("*.py")} - NOT_BENCHMARKS
    assert scripts == {name for name, _ in RUNS}


@pytest.mark.parametrize(("script", "args"), RUNS, ids=[name for name, _ in RUNS])
def test_the_benchmark_runs(script: str, args: list[str], tmp_path: Path) -> None:
    if "mqtt" in script or script == "bench_pi_zero.py":
        from clawseed_edge.testing.mqtt import require_mosquitto

        pytest.importorskip("aiomqtt")
        require_mosquitto()
    if script == "bench_mcp.py":
        pytest.importorskip("mcp")
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), *args],
        cwd=tmp_path,  # outside the checkout, as the scripts ask
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, f"{script} failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    assert done.stdout.strip(), f"{script} printed nothing"
    if "--vs-command" in args:  # measured in the same rounds, compared with our gateway
        assert "\nvs-command " in done.stdout and "the vs-command's" in done.stdout

"""CPU and wake-ups per idle minute of the service, next to bare asyncio, in the same run.

Configurations (each a fresh process, ``--sim``, a button on GPIO27):

* ``run``: ``run --sim`` with two sensors that are never read (``update_interval = "never"``);
* ``sensors``: the same with the two sensors at ``1s`` and history on;
* ``gateway``: ``gateway --sim`` with the same sensors and history;
* ``asyncio``: ``asyncio.run`` of a coroutine that waits for ever (the floor).

With ``--other-python PATH`` (a venv's python with another checkout installed, e.g. main's)
the three service configurations also run on that code, in the same run, as ``main:<name>``.

All processes of a round start together (each once ready: ``READY=1`` on its own
``NOTIFY_SOCKET``, as systemd sees it), settle for ``--settle-s``, then are measured over the
same ``--window-s`` (60 s by default): CPU is user + system time from ``/proc/PID/stat``;
wake-ups are every thread's context switches (voluntary + involuntary) from
``/proc/PID/task/*/status`` -- a thread that sleeps in ``epoll_wait`` costs one each time it
wakes; "of them slept" counts the voluntary ones only (the involuntary rest are preemptions,
which grow with the machine's load, not with what the process does). All scaled to a minute. Medians over ``--rounds``; the round's start order turns.

It also prints, for the ``sensors`` configurations, the samples stored per minute for one
sensor (from ``history.db``) and, in this process, the wall time an automation rule takes to
see a simulated change (the sampler and the sim bank on the real clock, ``--changes`` changes
at spread points of their second).

Run: ``python benchmarks/bench_idle_wakeups.py [--rounds 3] [--window-s 60]
[--other-python /path/to/other/venv/bin/python]``. Only loopback addresses; every wait bounded.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_service_ready import cpu_s, free_port

STEP_TIMEOUT_S = 90.0

BASE = """
[provider]
name = "ollama"
model = "qwen2.5:3b"
base_url = "http://127.0.0.1:9"
[hardware]
board = "sim"
[[devices]]
name = "doorbell"
pin = "GPIO27"
kind = "button"
[history]
enabled = {history}
flush_s = 10
[[sensors]]
name = "greenhouse"
driver = "bme280"
update_interval = "{interval}"
[[sensors]]
name = "porch"
driver = "ds18b20"
update_interval = "{interval}"
"""

GATEWAY = """
[gateway]
enabled = true
port = {port}
"""

FLOOR = "import asyncio, os, socket, sys\n" + (
    "async def main():\n"
    "    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\n"
    "    s.sendto(b'READY=1', '\\0' + os.environ['NOTIFY_SOCKET'][1:])\n"
    "    await asyncio.Event().wait()\n"
    "asyncio.run(main())\n"
)

KINDS = ("asyncio", "run", "sensors", "gateway")


@dataclass
class Proc:
    label: str
    kind: str
    home: Path
    popen: subprocess.Popen[bytes]
    notify: socket.socket
    ready: bool = False
    start: dict[str, float] = field(default_factory=dict)


def switches(pid: int, which: str = "ctxt_switches:") -> dict[str, int]:
    """Thread id -> its context switches so far: voluntary + involuntary by default, or only
    the lines containing ``which`` (``voluntary_ctxt_switches:``: the thread slept and woke)."""
    out: dict[str, int] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        total = 0
        with contextlib.suppress(OSError), open(task / "status", encoding="ascii") as f:
            for line in f:
                if line.startswith(which) or (which == "ctxt_switches:" and which in line):
                    total += int(line.split()[1])
        out[task.name] = total
    return out


VOLUNTARY = "voluntary_ctxt_switches:"


def spawn(kind: str, python: str, label: str) -> Proc:
    home = Path(tempfile.mkdtemp(prefix="bench-idle-"))
    name = f"bench-idle-{uuid.uuid4().hex}"
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind("\0" + name)
    notify.setblocking(False)
    env = {**os.environ, "PYTHONOPTIMIZE": "2", "NOTIFY_SOCKET": "@" + name}
    env.update(CLAWSEED_HOME=str(home))
    for var in ("WATCHDOG_USEC", "WATCHDOG_PID"):
        env.pop(var, None)
    if kind == "asyncio":
        command = [python, "-c", FLOOR]
    else:
        sampled = kind != "run"
        config = BASE.format(
            history="true" if sampled else "false", interval="1s" if sampled else "never"
        )
        if kind == "gateway":
            config += GATEWAY.format(port=free_port())
        (home / "config.toml").write_text(config, "utf-8")
        verb = "gateway" if kind == "gateway" else "run"
        command = [python, "-m", "clawseed_edge", verb, "--sim"]
    popen = subprocess.Popen(
        command,
        env=env,
        cwd=home,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    return Proc(label, kind, home, popen, notify)


def wait_ready(procs: list[Proc]) -> None:
    deadline = time.monotonic() + STEP_TIMEOUT_S
    while not all(p.ready for p in procs):
        for p in procs:
            if p.popen.poll() is not None:
                err = p.popen.stderr.read().decode(errors="replace") if p.popen.stderr else ""
                raise RuntimeError(f"{p.label} exited ({p.popen.returncode}): {err[-2000:]}")
            with contextlib.suppress(BlockingIOError):
                while not p.ready:
                    p.ready = b"READY=1" in p.notify.recv(4096)
        if time.monotonic() > deadline:
            raise RuntimeError("not every process became ready in time")
        time.sleep(0.05)


def samples_per_minute(home: Path, since: float, until: float) -> float | None:
    db = home / "history.db"
    if not db.exists():
        return None
    with contextlib.closing(sqlite3.connect(db)) as con:
        row = con.execute(
            "SELECT count(*) FROM points JOIN series ON series.id = points.series "
            "WHERE sensor = 'greenhouse' AND quantity = 'temperature' AND t >= ? AND t < ?",
            (since, until),
        ).fetchone()
    return float(row[0]) * 60.0 / (until - since)


Figures = dict[str, dict[str, float | None]]


def one_round(kinds: list[tuple[str, str, str]], settle_s: float, window_s: float) -> Figures:
    procs = [spawn(kind, python, label) for label, kind, python in kinds]
    try:
        wait_ready(procs)
        time.sleep(settle_s)
        wall0 = time.time()
        for p in procs:
            p.start = {"cpu": cpu_s(p.popen.pid), **switches(p.popen.pid)}
            p.start.update({f"v{k}": v for k, v in switches(p.popen.pid, VOLUNTARY).items()})
        time.sleep(window_s)
        wall1 = time.time()
        out: Figures = {}
        scale = 60.0 / window_s
        for p in procs:
            now = switches(p.popen.pid)
            woke = sum(n - int(p.start.get(tid, 0)) for tid, n in now.items())
            slept = switches(p.popen.pid, VOLUNTARY)
            voluntary = sum(n - int(p.start.get(f"v{tid}", 0)) for tid, n in slept.items())
            cpu = cpu_s(p.popen.pid) - p.start["cpu"]
            out[p.label] = {
                "cpu_ms": cpu * 1000 * scale,
                "wakeups": woke * scale,
                "voluntary": voluntary * scale,
            }
        # The history is written every flush_s: let the window's last batch land.
        time.sleep(11.0 if any(p.kind != "run" and p.kind != "asyncio" for p in procs) else 0)
        for p in procs:
            if p.kind in ("sensors", "gateway"):
                out[p.label]["samples"] = samples_per_minute(p.home, wall0, wall1)
        return out
    finally:
        for p in procs:
            p.popen.terminate()
        for p in procs:
            try:
                p.popen.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.popen.kill()
                p.popen.wait()
            p.notify.close()


async def reaction_wall_s(changes: int) -> list[float]:
    """Wall seconds from a simulated change to an automation rule firing, ``changes`` times."""
    from clawseed_edge.scheduler.rules import RuleState, parse_condition
    from clawseed_edge.service.sampler import SensorSampler
    from clawseed_edge.testing.sensors import sim_sensor_bank

    bank = sim_sensor_bank(
        '[[sensors]]\nname = "greenhouse"\ndriver = "bme280"\nupdate_interval = "1s"\n'
    )
    out: list[float] = []
    async with bank:
        sampler = SensorSampler(bank)
        rule = RuleState(parse_condition("greenhouse.temperature > 30"))
        fired = asyncio.Event()

        def on_state(reading: object) -> None:
            values = getattr(reading, "values", {})
            if rule.update(time.time(), lambda n: values.get(n.partition(".")[2])) == "fire":
                fired.set()

        sampler.states.subscribe(on_state)
        probe = bank.sim.sensor("greenhouse")
        probe.set(temperature=20.0)
        sampler.start()
        await asyncio.sleep(1.5)
        for k in range(changes):
            # A different point of the second each time (the sampler's grid is whole seconds
            # after its start): spread over the interval, as changes come in a greenhouse.
            await asyncio.sleep(1.0 + (k + 0.5) / changes)
            fired.clear()
            changed = time.perf_counter()
            probe.set(temperature=31.0)
            async with asyncio.timeout(5):
                await fired.wait()
            out.append(time.perf_counter() - changed)
            probe.set(temperature=20.0)
            await asyncio.sleep(1.2)  # the rule resets on the next sample below 30
        await sampler.aclose()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--window-s", type=float, default=60.0)
    parser.add_argument("--settle-s", type=float, default=5.0)
    parser.add_argument("--changes", type=int, default=10)
    parser.add_argument("--other-python", help="another checkout's venv python (e.g. main's)")
    parser.add_argument("--kinds", default=",".join(KINDS))
    args = parser.parse_args()
    chosen = [k for k in args.kinds.split(",") if k]
    kinds = [(k, k, sys.executable) for k in chosen]
    if args.other_python:
        kinds += [(f"main:{k}", k, args.other_python) for k in chosen if k != "asyncio"]

    rounds: list[Figures] = []
    for r in range(args.rounds):
        order = kinds[r % len(kinds) :] + kinds[: r % len(kinds)]
        rounds.append(one_round(order, args.settle_s, args.window_s))
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)

    print(
        f"idle minute ({args.window_s:g} s windows, {args.rounds} rounds, medians), "
        "every process of a round measured over the same window"
    )
    print(
        f"{'configuration':<16} {'CPU ms/min':>11} {'wake-ups/min':>13} {'of them slept':>14} "
        f"{'samples/min':>12}"
    )

    def median(label: str, key: str) -> float | None:
        got = [r[label].get(key) for r in rounds]
        values = [g for g in got if g is not None]
        return statistics.median(values) if len(values) == len(got) else None

    for label, _, _ in kinds:
        cpu, woke, slept, samples = (
            median(label, k) for k in ("cpu_ms", "wakeups", "voluntary", "samples")
        )
        shown = "-" if samples is None else f"{samples:.0f}"
        print(f"{label:<16} {cpu or 0:>11.0f} {woke or 0:>13.0f} {slept or 0:>14.0f} {shown:>12}")
    if "asyncio" in chosen:
        print(f"(bare asyncio wakes {median('asyncio', 'wakeups') or 0:.0f} times a minute)")
    for label in ("gateway", "sensors", "run"):
        other = f"main:{label}"
        if other in {k[0] for k in kinds} and label in chosen:
            ours, theirs = median(label, "wakeups") or 0.0, median(other, "wakeups") or 0.0
            print(f"{label}: wake-ups {ours / max(1.0, theirs):.2f}x main's in the same run")
    if args.changes:
        reactions = asyncio.run(reaction_wall_s(args.changes))
        print(
            f"automation reaction to a simulated change at 1 s, wall: median "
            f"{statistics.median(reactions):.2f} s, max {max(reactions):.2f} s "
            f"({len(reactions)} changes)"
        )


if __name__ == "__main__":
    main()

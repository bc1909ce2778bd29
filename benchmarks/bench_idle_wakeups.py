"""CPU and wake-ups per idle minute of the service, next to bare asyncio, in the same run.

Configurations (each a fresh process, ``--sim``, a button on GPIO27):

* ``run``: ``run --sim`` with two sensors that are never read (``update_interval = "never"``);
* ``sensors``: the same with the two sensors at ``1s`` and history on;
* ``gateway``: ``gateway --sim`` with the same sensors and history;
* ``asyncio``: ``asyncio.run`` of a coroutine that waits for ever (the floor).

With ``--other-python PATH`` (a venv's python with another checkout installed, e.g. main's)
the three service configurations also run on that code, in the same run, as ``main:<name>``.

With ``--vs-command 'CMD'`` any other program (another runtime's gateway, say) is measured in
the same rounds as ``vs-command``: started in a temporary directory as its own session (so its
children are counted too, and stopped with it), ready when ``--vs-ready-url`` (a loopback URL)
answers with any HTTP status, or after ``--vs-ready-s`` without one; ``{port}`` in the command
and the URL becomes a free loopback port, a new one each round. It prints the ratio of our
``gateway``'s CPU and wake-ups to it.

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
[--other-python /path/to/other/venv/bin/python] [--vs-command 'CMD' --vs-ready-url URL]``.
Only loopback addresses; every wait bounded.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shlex
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
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
VS = "vs-command"
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


@dataclass(frozen=True)
class VsCommand:
    """The other program of ``--vs-command``: its argv and how to tell it is ready."""

    argv: list[str]
    ready_url: str | None
    ready_s: float


@dataclass
class Proc:
    label: str
    kind: str
    home: Path
    popen: subprocess.Popen[bytes]
    notify: socket.socket | None
    ready: bool = False
    start: dict[str, float] = field(default_factory=dict)
    ready_url: str | None = None
    ready_by: float = 0.0  # without a ready URL: ready at this monotonic time
    log: Path | None = None


def session_pids(leader: int) -> list[int]:
    """The leader and every process of its session (a ``--vs-command`` and its children)."""
    pids = [leader]
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == leader:
            continue
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = (entry / "stat").read_text("ascii").rsplit(")", 1)[1].split()
            if int(fields[3]) == leader:  # field 6 of stat: the session id
                pids.append(int(entry.name))
    return pids


def switches(pid: int, which: str = "ctxt_switches:", *, session: bool = False) -> dict[str, int]:
    """Thread id -> its context switches so far: voluntary + involuntary by default, or only
    the lines containing ``which`` (``voluntary_ctxt_switches:``: the thread slept and woke).
    ``session``: every thread of every process in ``pid``'s session."""
    out: dict[str, int] = {}
    for proc in session_pids(pid) if session else [pid]:
        tasks: list[Path] = []
        with contextlib.suppress(OSError):  # a child that exited meanwhile
            tasks = list(Path(f"/proc/{proc}/task").iterdir())
        for task in tasks:
            total = 0
            with contextlib.suppress(OSError), open(task / "status", encoding="ascii") as f:
                for line in f:
                    if line.startswith(which) or (which == "ctxt_switches:" and which in line):
                        total += int(line.split()[1])
            out[task.name] = total
    return out


def cpu_total_s(p: Proc) -> float:
    """CPU seconds of the process, or of its whole session for a ``--vs-command``."""
    total = 0.0
    for pid in session_pids(p.popen.pid) if p.kind == VS else [p.popen.pid]:
        with contextlib.suppress(OSError, IndexError, ValueError):
            total += cpu_s(pid)
    return total


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


def spawn_vs(vs: VsCommand) -> Proc:
    """Start the ``--vs-command`` in a temporary directory, as its own session; its output
    goes to a file there (a pipe nobody reads would stall it once full)."""
    home = Path(tempfile.mkdtemp(prefix="bench-idle-vs-"))
    port = str(free_port())
    argv = [a.replace("{port}", port) for a in vs.argv]
    url = vs.ready_url.replace("{port}", port) if vs.ready_url else None
    env = {k: v for k, v in os.environ.items() if k not in ("NOTIFY_SOCKET", "WATCHDOG_USEC")}
    log = home / "output.log"
    with open(log, "wb") as out:
        try:
            popen = subprocess.Popen(
                argv,
                env=env,
                cwd=home,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as exc:
            raise SystemExit(f"--vs-command {shlex.join(argv)!r} cannot start: {exc}") from exc
    ready_by = time.monotonic() + (0.0 if url else vs.ready_s)
    return Proc(VS, VS, home, popen, None, ready_url=url, ready_by=ready_by, log=log)


def answers(url: str) -> bool:
    """The URL answers with any HTTP status (a 404 is an answer: the server is up)."""
    try:
        with urllib.request.urlopen(url, timeout=1.0):
            return True
    except urllib.error.HTTPError:
        return True
    except (OSError, ValueError):
        return False


def stop(p: Proc) -> None:
    """Terminate a process (a ``--vs-command``: its session), then kill it after 20 s."""

    def send(sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError):
            if p.kind == VS:
                os.killpg(p.popen.pid, sig)  # its own session: the leader's group
            else:
                p.popen.send_signal(sig)

    send(signal.SIGTERM)
    try:
        p.popen.wait(timeout=20)
    except subprocess.TimeoutExpired:
        send(signal.SIGKILL)
        p.popen.wait()
    if p.kind == VS:
        send(signal.SIGKILL)  # children left behind by the leader's exit


def exit_text(p: Proc) -> str:
    if p.log is not None:
        return p.log.read_bytes()[-2000:].decode(errors="replace")
    return p.popen.stderr.read().decode(errors="replace")[-2000:] if p.popen.stderr else ""


def wait_ready(procs: list[Proc]) -> None:
    deadline = time.monotonic() + STEP_TIMEOUT_S
    while not all(p.ready for p in procs):
        for p in procs:
            if p.popen.poll() is not None:
                raise RuntimeError(f"{p.label} exited ({p.popen.returncode}): {exit_text(p)}")
            if p.ready:
                continue
            if p.notify is None:
                if p.ready_url is not None:
                    p.ready = answers(p.ready_url)
                else:
                    p.ready = time.monotonic() >= p.ready_by
                continue
            with contextlib.suppress(BlockingIOError):
                while not p.ready:
                    p.ready = b"READY=1" in p.notify.recv(4096)
        if time.monotonic() > deadline:
            late = ", ".join(p.label for p in procs if not p.ready)
            raise RuntimeError(f"not ready within {STEP_TIMEOUT_S:g} s: {late}")
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


def one_round(
    kinds: list[tuple[str, str, str]], settle_s: float, window_s: float, vs: VsCommand | None
) -> Figures:
    procs: list[Proc] = []
    try:
        for label, kind, python in kinds:
            if kind == VS and vs is not None:
                procs.append(spawn_vs(vs))
            else:
                procs.append(spawn(kind, python, label))
        wait_ready(procs)
        time.sleep(settle_s)
        wall0 = time.time()
        for p in procs:
            tree = p.kind == VS
            p.start = {"cpu": cpu_total_s(p), **switches(p.popen.pid, session=tree)}
            slept0 = switches(p.popen.pid, VOLUNTARY, session=tree)
            p.start.update({f"v{k}": v for k, v in slept0.items()})
        time.sleep(window_s)
        wall1 = time.time()
        out: Figures = {}
        scale = 60.0 / window_s
        for p in procs:
            tree = p.kind == VS
            now = switches(p.popen.pid, session=tree)
            woke = sum(n - int(p.start.get(tid, 0)) for tid, n in now.items())
            slept = switches(p.popen.pid, VOLUNTARY, session=tree)
            voluntary = sum(n - int(p.start.get(f"v{tid}", 0)) for tid, n in slept.items())
            cpu = cpu_total_s(p) - p.start["cpu"]
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
            stop(p)
            if p.notify is not None:
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
    parser.add_argument(
        "--vs-command",
        help="another program to measure in the same rounds, e.g. 'other-gateway --port {port}'",
    )
    parser.add_argument(
        "--vs-ready-url",
        help="the --vs-command is ready when this loopback URL answers (e.g. "
        "http://127.0.0.1:{port}/health)",
    )
    parser.add_argument(
        "--vs-ready-s",
        type=float,
        default=10.0,
        help="without --vs-ready-url: seconds after its start that the --vs-command is ready",
    )
    args = parser.parse_args()
    chosen = [k for k in args.kinds.split(",") if k]
    unknown = sorted(set(chosen) - set(KINDS))
    if unknown:
        parser.error(f"--kinds: unknown {', '.join(unknown)}; choose from {', '.join(KINDS)}")
    kinds = [(k, k, sys.executable) for k in chosen]
    if args.other_python:
        kinds += [(f"main:{k}", k, args.other_python) for k in chosen if k != "asyncio"]
    vs = vs_command(parser, args)
    if vs is not None:
        kinds.append((VS, VS, ""))

    rounds: list[Figures] = []
    for r in range(args.rounds):
        order = kinds[r % len(kinds) :] + kinds[: r % len(kinds)]
        rounds.append(one_round(order, args.settle_s, args.window_s, vs))
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
    if vs is not None and "gateway" in chosen:
        for key, what in (("cpu_ms", "CPU"), ("wakeups", "wake-ups")):
            ours, theirs = median("gateway", key) or 0.0, median(VS, key) or 0.0
            ratio = f"{ours / theirs:.2f}x" if theirs > 0 else "- (the vs-command used none)"
            print(f"gateway: {what} {ratio} the vs-command's in the same run")
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


def vs_command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> VsCommand | None:
    """The checked ``--vs-*`` options (None without ``--vs-command``); errors name the option."""
    if not args.vs_command:
        if args.vs_ready_url:
            parser.error("--vs-ready-url needs --vs-command")
        return None
    try:
        argv = shlex.split(args.vs_command)
    except ValueError as exc:
        parser.error(f"--vs-command: {exc} (quote it as a shell would)")
    if not argv:
        parser.error("--vs-command is empty; give the command that starts the other program")
    url = args.vs_ready_url
    if url:
        parts = urllib.parse.urlsplit(url.replace("{port}", "1"))
        if parts.scheme != "http" or parts.hostname not in LOOPBACK:
            parser.error(
                f"--vs-ready-url {url[:80]!r}: give an http:// URL on 127.0.0.1, localhost or "
                "::1 (the benchmark touches only loopback addresses)"
            )
    if not 0 <= args.vs_ready_s <= STEP_TIMEOUT_S:
        parser.error(f"--vs-ready-s must be 0..{STEP_TIMEOUT_S:g} seconds")
    return VsCommand(argv, url, args.vs_ready_s)


if __name__ == "__main__":
    main()

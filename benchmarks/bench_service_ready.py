"""Service start-up and memory: ``clawseed-edge gateway --sim`` with Ollama configured, next to a
bare Starlette + uvicorn app, measured in the same run.

For each of ``--runs`` runs, a fresh process is executed and measured from the moment before
``exec``:

* to ``/health`` answering 200 (polled every 5 ms over loopback);
* to ``READY=1`` arriving on a ``NOTIFY_SOCKET`` bound here (the gateway only);
* the CPU time (user + system) it used by the time ``/health`` answered: on a shared, busy
  machine wall times swing with the load, CPU time much less;
* its RSS at ``--idle-s`` seconds (10 by default) after the exec, no request made but /health;
* its RSS after the first turn (a WebSocket message answered by a fake Ollama on 127.0.0.1
  that speaks Ollama's wire protocol; the baseline's "turn" is one more GET /health).

The baseline is the same server stack without the runtime: a Starlette app with one /health
route on uvicorn, started by the same interpreter, with the gateway's WebSocket implementation
(``ws="wsproto"``; uvicorn's default would load the ``websockets`` library instead, which the
gateway does not). Medians over the runs, and the ratios of the gateway's medians to the
baseline's.

Run: ``python benchmarks/bench_service_ready.py [--runs 3] [--idle-s 10] [--turns 1]``; with
``--turns 300`` the turns run on one connection and RSS is taken after every 50th (issue 28
item 5: what the first turns add, and whether it stays flat).

Both processes run with ``PYTHONOPTIMIZE=2`` as the systemd unit runs the service (docstrings and
asserts left out of the code objects); ``--optimize 0`` measures them as the CLI runs. It first
says whether the code had up-to-date bytecode at every level kept (``bytecode_state.py``).

Only loopback addresses are used; every wait is bounded.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path

STEP_TIMEOUT_S = 60.0

CONFIG = """
[provider]
name = "ollama"
model = "qwen2.5:3b"
base_url = "{url}"
[autonomy]
level = "full"
[gateway]
enabled = true
port = {port}
require_pairing = false
requests_per_minute = 0
[hardware]
board = "sim"
[[devices]]
name = "lamp"
pin = "GPIO17"
kind = "led"
"""

BASELINE = """
import sys, uvicorn
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

async def health(request):
    return JSONResponse({"status": "ok"})

app = Starlette(routes=[Route("/health", health)])
uvicorn.run(
    app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning", lifespan="off", ws="wsproto"
)
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def cpu_s(pid: int) -> float:
    """User + system CPU seconds the process used so far (steadier than wall time under load)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def health_ok(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=0.5) as r:
            return r.status == 200
    except OSError:
        return False


def ready_seen(sock: socket.socket | None) -> bool:
    if sock is None:
        return False
    with contextlib.suppress(BlockingIOError):
        while True:
            if b"READY=1" in sock.recv(4096):
                return True
    return False


def turns_on_one_connection(port: int, count: int, pid: int) -> list[float]:
    """Run ``count`` turns on one WebSocket; RSS (MB) after the 1st, then after every 50th."""
    import asyncio

    from websockets.asyncio.client import connect

    samples: list[float] = []

    async def run() -> None:
        async with asyncio.timeout(STEP_TIMEOUT_S * max(1, count // 20)):
            async with connect(f"ws://127.0.0.1:{port}/ws/chat") as ws:
                while json.loads(await ws.recv())["type"] != "connected":
                    pass
                for i in range(count):
                    text = f"hello {i}, is the porch light on"  # distinct: a new daily entry
                    await ws.send(json.dumps({"type": "message", "content": text}))
                    while True:
                        event = json.loads(await ws.recv())
                        if event["type"] in ("done", "error", "aborted"):
                            if event["type"] != "done":
                                raise RuntimeError(f"the turn failed: {event}")
                            break
                    if i == 0 or (i + 1) % 50 == 0:
                        samples.append(rss_mb(pid))

    asyncio.run(run())
    return samples


def measure(
    kind: str, ollama_url: str, idle_s: float, turns: int = 1, optimize: int = 2
) -> dict[str, float]:
    port = free_port()
    env = {**os.environ, "PYTHONOPTIMIZE": str(optimize)}
    for name in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"):
        env.pop(name, None)
    notify: socket.socket | None = None
    home = Path(tempfile.mkdtemp(prefix="bench-ready-"))
    if kind == "gateway":
        (home / "config.toml").write_text(CONFIG.format(url=ollama_url, port=port), "utf-8")
        name = f"bench-ready-{uuid.uuid4().hex}"
        notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        notify.bind("\0" + name)
        notify.setblocking(False)
        env.update(CLAWSEED_HOME=str(home), NOTIFY_SOCKET="@" + name)
        command = [str(Path(sys.executable).parent / "clawseed-edge"), "gateway", "--sim"]
    else:
        command = [sys.executable, "-c", BASELINE, str(port)]
    started = time.perf_counter()
    proc = subprocess.Popen(
        command,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
    )
    result: dict[str, float] = {}
    try:
        deadline = started + STEP_TIMEOUT_S
        while "health_s" not in result or (notify and "ready_s" not in result):
            now = time.perf_counter()
            if now > deadline or proc.poll() is not None:
                raise RuntimeError(f"{kind} did not become ready (exit {proc.poll()})")
            if "ready_s" not in result and ready_seen(notify):
                result["ready_s"] = time.perf_counter() - started
            if "health_s" not in result and health_ok(port):
                result["health_s"] = time.perf_counter() - started
                result["health_cpu_s"] = cpu_s(proc.pid)
            time.sleep(0.005)
        time.sleep(max(0.0, started + idle_s - time.perf_counter()))
        result["idle_mb"] = rss_mb(proc.pid)
        if kind == "gateway":
            samples = turns_on_one_connection(port, turns, proc.pid)
            result["turn_mb"] = samples[0]
            for n, mb in zip([1, *range(50, turns + 1, 50)][1:], samples[1:], strict=False):
                result[f"after_{n}_mb"] = mb
        else:
            assert health_ok(port)
            result["turn_mb"] = rss_mb(proc.pid)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if notify is not None:
            notify.close()
        shutil.rmtree(home, ignore_errors=True)
    return result


def main() -> int:
    from bytecode_state import add_optimize_option, bytecode_line

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--idle-s", type=float, default=10.0)
    parser.add_argument(
        "--turns", type=int, default=1, help="turns on one connection (RSS every 50: item 5)"
    )
    add_optimize_option(parser)
    args = parser.parse_args()

    print(bytecode_line(), flush=True)  # start-up cost depends on it: say which case ran
    from clawseed_edge.testing.fake_servers import FakeOllama, Reply

    with FakeOllama() as ollama:
        ollama.default_reply = Reply.text("ok")
        runs: dict[str, list[dict[str, float]]] = {"gateway": [], "baseline": []}
        for i in range(args.runs):
            for kind in ("baseline", "gateway"):  # interleaved: load drifts hit both alike
                runs[kind].append(measure(kind, ollama.url, args.idle_s, args.turns, args.optimize))
                print(f"run {i + 1} {kind}: {runs[kind][-1]}", file=sys.stderr, flush=True)
    medians = {
        kind: {key: statistics.median(r[key] for r in results if key in r) for key in results[0]}
        for kind, results in runs.items()
    }
    gw, base = medians["gateway"], medians["baseline"]
    print(
        f"medians over {args.runs} runs (idle RSS at {args.idle_s:g} s after exec; "
        f"PYTHONOPTIMIZE={args.optimize})"
    )
    print(f"{'':28}{'gateway --sim':>16}{'bare Starlette':>16}{'ratio':>8}")
    rows = [
        ("exec -> /health 200", "health_s", "s"),
        ("exec -> READY=1", "ready_s", "s"),
        ("CPU used by /health 200", "health_cpu_s", "s"),
        ("idle RSS", "idle_mb", "MB"),
        ("RSS after the first turn", "turn_mb", "MB"),
    ]
    rows += [(f"RSS after {k[6:-3]} turns", k, "MB") for k in gw if k.startswith("after_")]
    for label, key, unit in rows:
        b = base.get(key) if not key.startswith("after_") else None
        shown_b = f"{b:.2f} {unit}" if b is not None else "-"
        ratio = f"{gw[key] / b:.2f}x" if b else "-"
        print(f"{label:28}{gw[key]:>13.2f} {unit:<2}{shown_b:>16}{ratio:>8}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

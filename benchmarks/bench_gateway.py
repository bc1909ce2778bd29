"""Gateway load: concurrent WebSocket clients running turns, next to a bare Starlette echo server.

For each client count (10, 50, 200 by default) and each repeat, a fresh server process is
started on 127.0.0.1 (an ephemeral port) and N clients connect at once; each runs ``--turns``
turns one after another (send a message, wait for ``done``). Measured:

* turns per second over the whole run, and p95 turn latency (send -> done);
* the server's RSS before the clients connect, and after they all ran (still connected);
* RSS per connected client: (after - before) / N;
* server CPU time per turn, the clients' connection set-up included (user + system, from
  /proc: steadier than rates on a busy machine).

The baseline, in the same run: a bare Starlette WebSocket echo app on uvicorn (the same server
stack without the agent, with the gateway's WebSocket implementation, ``ws="wsproto"``), driven
by the same clients (send a message, wait for the echo).
The gateway runs a zero-latency provider, memory ``none`` and pairing off, so what is measured
is the gateway and the turn engine, not a model or SQLite. Medians over ``--repeats`` runs.

Run: ``python benchmarks/bench_gateway.py [--clients 10,50,200] [--turns 20] [--repeats 3]``

``--idle``: RSS per idle client instead (issue 28 item 4). N clients connect (the gateway's
clients wait for ``connected``), nothing is sent; the server's RSS after ``--settle-s``
seconds, less its RSS before, per client. Three servers in the same run: the gateway, the echo
app with uvicorn's default permessage-deflate, and the echo app with it off (the clients, like
browsers, offer it). Both echo apps run on wsproto, as the gateway does, and wsproto makes a
connection's zlib state at its first compressed message, so idle, the two echo rows are alike
(uvicorn's implementation on the websockets library made it at the handshake: 59.5 KB per idle
client with deflate, 25.7 KB without).
Run: ``python benchmarks/bench_gateway.py --idle --clients 200 --repeats 5``

Only loopback addresses are used; every loop is bounded in count and time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

CONFIG = """
[provider]
name = "demo"
[memory]
backend = "none"
[autonomy]
level = "full"
[gateway]
enabled = true
port = 0
require_pairing = false
requests_per_minute = 0
max_connections = 1024
# every client connects from 127.0.0.1: the per-address cap (32) would refuse the 33rd
max_connections_per_address = 1024
"""

STEP_TIMEOUT_S = 60.0


# --- server processes --------------------------------------------------------------------------


class InstantProvider:
    """A zero-latency provider that answers every request with the same short text."""

    name = "instant"
    model = "instant"

    def __init__(self) -> None:
        from clawseed_edge.api import ProviderCapabilities

        self._caps = ProviderCapabilities(native_tools=True, streaming=False)

    @property
    def capabilities(self) -> Any:
        return self._caps

    async def chat(self, request: Any) -> Any:
        from clawseed_edge.api import ChatResponse, StopReason, Usage

        return ChatResponse(text="ok", stop_reason=StopReason.END_TURN, usage=Usage(10, 1))

    async def stream(self, request: Any) -> AsyncIterator[Any]:
        from clawseed_edge.api import StreamDone

        yield StreamDone(await self.chat(request))

    async def aclose(self) -> None:
        return None


async def serve_gateway() -> None:
    import logging

    from clawseed_edge.config.file import load_config

    # Memory "none" refuses to save history; its per-turn warning would measure the log.
    logging.disable(logging.WARNING)
    from clawseed_edge.service import Service, ServiceOptions

    home = Path(tempfile.mkdtemp(prefix="bench-gateway-"))
    os.environ["CLAWSEED_HOME"] = str(home)
    (home / "config.toml").write_text(CONFIG, encoding="utf-8")
    options = ServiceOptions(
        assemble={"provider": InstantProvider()}, control_socket=False, say=lambda _: None
    )
    async with Service(load_config(home / "config.toml"), options) as service:
        assert service.server is not None
        print(service.server.port, flush=True)
        await asyncio.to_thread(sys.stdin.read)  # until the parent closes our stdin


async def serve_echo(deflate: bool = True) -> None:
    import uvicorn
    from starlette.applications import Starlette
    from starlette.routing import WebSocketRoute
    from starlette.websockets import WebSocket, WebSocketDisconnect

    async def echo(websocket: WebSocket) -> None:
        await websocket.accept()
        try:
            while True:
                await websocket.send_text(await websocket.receive_text())
        except WebSocketDisconnect:
            pass

    app = Starlette(routes=[WebSocketRoute("/ws/chat", echo)])
    config = uvicorn.Config(
        app, log_level="warning", lifespan="off", ws="wsproto", ws_per_message_deflate=deflate
    )
    server = uvicorn.Server(config)
    # Bound here, listening before uvicorn starts: early clients wait in the backlog.
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(1024)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    print(sock.getsockname()[1], flush=True)
    await asyncio.to_thread(sys.stdin.read)
    server.should_exit = True
    await task


# --- measuring -------------------------------------------------------------------------------


def cpu_s(pid: int) -> float:
    """User + system CPU seconds the process used so far."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


async def run_clients(port: int, clients: int, turns: int, gateway: bool) -> dict[str, Any]:
    from websockets.asyncio.client import connect

    url = f"ws://127.0.0.1:{port}/ws/chat"
    latencies: list[float] = []
    sockets = []
    async with asyncio.timeout(STEP_TIMEOUT_S):
        for _ in range(clients):
            ws = await connect(url, max_size=1 << 20)
            if gateway:
                while json.loads(await ws.recv())["type"] != "connected":
                    pass
            sockets.append(ws)

    async def one(ws: Any) -> None:
        for i in range(turns):
            started = time.perf_counter()
            await ws.send(json.dumps({"type": "message", "content": f"turn {i}"}))
            if gateway:
                while json.loads(await ws.recv())["type"] != "done":
                    pass
            else:
                await ws.recv()
            latencies.append(time.perf_counter() - started)

    if turns == 0:  # idle clients: connected, nothing sent
        return {"sockets": sockets, "rate": 0.0, "p95_ms": 0.0}
    started = time.perf_counter()
    async with asyncio.timeout(STEP_TIMEOUT_S * 5):
        await asyncio.gather(*(one(ws) for ws in sockets))
    elapsed = time.perf_counter() - started
    return {
        "sockets": sockets,
        "rate": clients * turns / elapsed,
        "p95_ms": statistics.quantiles(latencies, n=20)[-1] * 1000,
    }


async def measure(kind: str, clients: int, turns: int, settle_s: float = 0.0) -> dict[str, float]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        __file__,
        f"--serve-{kind}",
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        async with asyncio.timeout(STEP_TIMEOUT_S):
            port = int((await proc.stdout.readline()).decode())
        before = rss_mb(proc.pid)
        cpu_before = cpu_s(proc.pid)
        await asyncio.sleep(settle_s)
        before = rss_mb(proc.pid) if settle_s else before
        result = await run_clients(port, clients, turns, kind == "gateway")
        await asyncio.sleep(settle_s)
        after = rss_mb(proc.pid)
        cpu_ms = (cpu_s(proc.pid) - cpu_before) * 1000 / max(1, clients * turns)
        for ws in result["sockets"]:
            await ws.close()
    finally:
        proc.stdin.close()
        try:
            async with asyncio.timeout(15):
                await proc.wait()
        except TimeoutError:
            proc.kill()
            await proc.wait()
    return {
        "rate": result["rate"],
        "p95_ms": result["p95_ms"],
        "cpu_ms": cpu_ms,
        "rss_before": before,
        "rss_after": after,
        "per_client_kb": (after - before) * 1024 / clients,
    }


def median(runs: list[dict[str, float]], key: str) -> float:
    return statistics.median(r[key] for r in runs)


async def main_idle(args: argparse.Namespace) -> None:
    kinds = ("gateway", "echo", "echo-nodeflate")
    print(
        f"idle clients: RSS {args.settle_s:g} s after connecting, less RSS before; median of "
        f"{args.repeats} runs, kinds interleaved\n"
    )
    print(f"{'clients':>7} | " + " | ".join(f"{k + ' KB/client':>26}" for k in kinds))
    for n in [int(x) for x in args.clients.split(",")]:
        runs: dict[str, list[dict[str, float]]] = {k: [] for k in kinds}
        for _ in range(args.repeats):
            for kind in kinds:
                runs[kind].append(await measure(kind, n, 0, args.settle_s))
        cells = []
        for kind in kinds:
            per = median(runs[kind], "per_client_kb")
            cells.append(
                f"{per:>7.1f} ({median(runs[kind], 'rss_before'):.1f} -> "
                f"{median(runs[kind], 'rss_after'):.1f} MB)"
            )
        print(f"{n:>7} | " + " | ".join(f"{c:>26}" for c in cells), flush=True)


async def main(args: argparse.Namespace) -> None:
    if args.idle:
        await main_idle(args)
        return
    counts = [int(x) for x in args.clients.split(",")]
    print(
        f"{args.turns} turns per client, median of {args.repeats} runs; "
        "servers on 127.0.0.1, clients in this process\n"
    )
    header = (
        "clients | gateway turns/s | p95 ms | CPU ms/turn | RSS before -> after MB | "
        "KB/client || echo msgs/s | p95 ms | CPU ms/msg | RSS before -> after MB | "
        "KB/client || rate ratio"
    )
    print(header)
    print("-" * len(header))
    for n in counts:
        gateway = [await measure("gateway", n, args.turns) for _ in range(args.repeats)]
        echo = [await measure("echo", n, args.turns) for _ in range(args.repeats)]
        g_rate, e_rate = median(gateway, "rate"), median(echo, "rate")
        print(
            f"{n:>7} | {g_rate:>15.0f} | {median(gateway, 'p95_ms'):>6.1f} | "
            f"{median(gateway, 'cpu_ms'):>11.2f} | "
            f"{median(gateway, 'rss_before'):>8.1f} -> {median(gateway, 'rss_after'):<8.1f}    | "
            f"{median(gateway, 'per_client_kb'):>9.0f} || "
            f"{e_rate:>11.0f} | {median(echo, 'p95_ms'):>6.1f} | "
            f"{median(echo, 'cpu_ms'):>10.2f} | "
            f"{median(echo, 'rss_before'):>8.1f} -> {median(echo, 'rss_after'):<8.1f}    | "
            f"{median(echo, 'per_client_kb'):>9.0f} || {g_rate / e_rate:.2f}",
            flush=True,
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", default="10,50,200")
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--idle", action="store_true", help="RSS per idle client (see doc)")
    parser.add_argument("--settle-s", type=float, default=2.0, help="with --idle")
    parser.add_argument("--serve-gateway", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--serve-echo", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--serve-echo-nodeflate", action="store_true", help=argparse.SUPPRESS)
    ns = parser.parse_args()
    if ns.serve_gateway:
        asyncio.run(serve_gateway())
    elif ns.serve_echo:
        asyncio.run(serve_echo())
    elif ns.serve_echo_nodeflate:
        asyncio.run(serve_echo(deflate=False))
    else:
        asyncio.run(main(ns))

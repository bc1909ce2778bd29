"""MCP's cost: idle RSS of ``run --sim`` with and without MCP, and one hardware call through
MCP over stdio against the same call by the agent in-process.

1. Idle RSS (``/proc/PID/status`` VmRSS after ``--idle-s`` seconds, measured as
   bench_idle_imports.py does): ``run --sim`` with a simulated LED, (a) without ``[mcp]``,
   (b) with one ``[[mcp.servers]]`` stdio client (the test suite's small SDK server; its own
   process is not counted), (c) with the gateway and without ``[mcp]``, (d) the same with
   ``[mcp] http = true``. Each increment ((b) - (a), (d) - (c)) at every ``PYTHONOPTIMIZE``
   level of ``--levels`` (0: as the commands people type; 2: as the systemd unit runs it).
   Interleaved runs; medians.
2. Latency of ``gpio_switch`` on the simulated LED (``full`` autonomy, so no approval):
   (a) the SDK's ``Client`` calling ``clawseed-edge mcp serve --sim`` over stdio (a started
   session; each call is a JSON-RPC round trip through the policy and the tool), (b) the same
   through ``mcp serve`` bridged to a running ``run --sim`` service (each call also crosses
   the service's control socket, as for a host on a Pi whose service owns the pins), (c) the
   same call run by the agent in-process (``agent.tool_run.call_tool``: the same bounds,
   schema, hooks and policy, without MCP). Medians and p95 over ``--calls`` calls each.

Run: ``python benchmarks/bench_mcp.py [--runs 5] [--idle-s 3] [--calls 200] [--levels 0,2]``.
Needs the ``dev`` extra (the SDK drives the calls and is the external server). Linux only.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_idle_imports import READY_LINE, measure

BASE = """
[provider]
name = "demo"
[autonomy]
level = "full"
max_actions_per_hour = 100000
[gateway]
enabled = false
[hardware]
board = "sim"
[[devices]]
name = "lamp"
pin = "GPIO17"
kind = "led"
"""
GATEWAY = """
[gateway]
enabled = true
port = 0
"""
HTTP = """
[mcp]
http = true
"""
SERVER = f"""
[[mcp.servers]]
name = "fake"
command = "{sys.executable}"
args = ["-m", "clawseed_edge.testing.fake_servers.mcp_server"]
"""


def _p95(values: list[float]) -> float:
    return sorted(values)[max(0, int(len(values) * 0.95) - 1)]


async def _through_mcp(config: Path, home: Path, calls: int) -> list[float]:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "clawseed_edge", "--config", str(config), "mcp", "serve", "--sim"],
        env={"CLAWSEED_HOME": str(home)},
    )
    times = []
    async with Client(params, mode="legacy") as client:
        for i in range(calls + 5):
            start = time.perf_counter()
            result = await client.call_tool("gpio_switch", {"device": "lamp", "on": i % 2 == 0})
            elapsed = time.perf_counter() - start
            assert not result.is_error, result.content
            if i >= 5:  # warm-up
                times.append(elapsed)
    return times


def _bridged(config: Path, home: Path, calls: int) -> list[float]:
    """``_through_mcp`` while a ``run --sim`` service of the same home runs: ``mcp serve``
    bridges to it over its control socket."""
    import subprocess

    env = {**os.environ, "CLAWSEED_HOME": str(home)}
    argv = [sys.executable, "-m", "clawseed_edge", "--config", str(config), "run", "--sim"]
    service = subprocess.Popen(
        argv, env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True
    )
    try:
        assert service.stderr is not None
        deadline = time.monotonic() + 60
        for line in service.stderr:
            if READY_LINE in line:
                break
            if time.monotonic() > deadline:
                raise RuntimeError("the service did not become ready within 60 s")
        else:
            raise RuntimeError(f"the service ended before it was ready (exit {service.wait()})")
        return asyncio.run(_through_mcp(config, home, calls))
    finally:
        service.terminate()
        try:
            service.wait(timeout=20)
        except subprocess.TimeoutExpired:
            service.kill()
            service.wait()


async def _by_the_agent(config: Path, calls: int) -> list[float]:
    from clawseed_edge.agent.approval import StaticApprover
    from clawseed_edge.agent.tool_run import call_tool
    from clawseed_edge.api import ToolContext
    from clawseed_edge.config.assembly import assemble
    from clawseed_edge.config.file import load_config

    runtime = await assemble(
        load_config(config), sim=True, approver=StaticApprover(False), probe_at_start=False
    )
    times = []
    context = ToolContext(session_id="bench", channel="bench")
    async with runtime:
        for i in range(calls + 5):
            start = time.perf_counter()
            result = await call_tool(
                runtime.agent, "gpio_switch", {"device": "lamp", "on": i % 2 == 0}, context
            )
            elapsed = time.perf_counter() - start
            assert result.success, result.error
            if i >= 5:
                times.append(elapsed)
    return times


_NO_GATEWAY = "[gateway]\nenabled = false\n"
#: (name, the config without MCP, the config with it).
_PAIRS = (
    ("one [[mcp.servers]] (stdio)", "without", "with"),
    ("[mcp] http = true (gateway)", "gateway", "gateway_http"),
)


def _idle_increments(
    configs: dict[str, Path], home: Path, levels: list[int], runs: int, idle_s: float
) -> None:
    """Print each MCP increment of idle RSS at each PYTHONOPTIMIZE level (interleaved runs)."""
    from bytecode_state import bytecode_line

    print(bytecode_line())
    rss: dict[tuple[int, str], list[float]] = {}
    for _ in range(runs):
        for level in levels:
            env = {**os.environ, "CLAWSEED_HOME": str(home), "PYTHONOPTIMIZE": str(level)}
            env.pop("PYTHONDEVMODE", None)
            for key, path in configs.items():
                argv = [
                    sys.executable,
                    "-m",
                    "clawseed_edge",
                    "--config",
                    str(path),
                    "run",
                    "--sim",
                ]
                rss.setdefault((level, key), []).append(measure(argv, env, READY_LINE, idle_s)[1])
    print(f"idle RSS of run --sim after {idle_s:g} s, median of {runs} interleaved runs")
    for level in levels:
        for name, base, plus in _PAIRS:
            without = statistics.median(rss[(level, base)])
            with_mcp = statistics.median(rss[(level, plus)])
            print(
                f"  PYTHONOPTIMIZE={level}  {name:<30} {without:6.1f} -> {with_mcp:6.1f} MB  "
                f"(+{with_mcp - without:.1f} MB)"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--idle-s", type=float, default=3.0)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--levels", default="0,2", help="PYTHONOPTIMIZE levels, comma-separated")
    args = parser.parse_args()

    levels = [int(level) for level in args.levels.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        configs = {}
        for key, text in {
            "without": BASE,
            "with": BASE + SERVER,
            "gateway": BASE.replace(_NO_GATEWAY, GATEWAY),
            "gateway_http": BASE.replace(_NO_GATEWAY, GATEWAY) + HTTP,
        }.items():
            configs[key] = Path(tmp) / f"{key}.toml"
            configs[key].write_text(text, encoding="utf-8")
        without = configs["without"]
        home = Path(tmp) / "home"
        _idle_increments(configs, home, levels, args.runs, args.idle_s)

        os.environ["CLAWSEED_HOME"] = str(home)
        mcp_times = asyncio.run(_through_mcp(without, home, args.calls))
        bridged_times = _bridged(without, Path(tmp) / "bridged", args.calls)
        agent_times = asyncio.run(_by_the_agent(without, args.calls))
    print(f"gpio_switch on a simulated LED, {args.calls} calls each (after 5 warm-up)")
    rows = (
        ("through MCP stdio", mcp_times),
        ("MCP bridged to run", bridged_times),
        ("by the agent", agent_times),
    )
    for name, times in rows:
        med = statistics.median(times) * 1e3
        print(f"  {name:<20} median {med:7.3f} ms  p95 {_p95(times) * 1e3:7.3f} ms")
    agent = statistics.median(agent_times)
    print(
        f"  MCP / agent: {statistics.median(mcp_times) / agent:.1f}x; "
        f"bridged / agent: {statistics.median(bridged_times) / agent:.1f}x"
    )


if __name__ == "__main__":
    main()

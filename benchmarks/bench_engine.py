"""Engine overhead with a zero-latency scripted provider.

Measures, as the median of repeated runs, in one process:

* plain-text turns per second through ``Agent.run`` (prompt cached, history trimmed), against a
  baseline of awaiting the scripted provider's ``chat`` directly;
* microseconds per tool call through the full pipeline (argument bounds, the schema check,
  SecurityPolicy in ``full`` autonomy with its rate window, a no-op user hook, timeout,
  after-hooks, observer, events, history), against a baseline of awaiting the tool's
  ``execute`` directly;
* microseconds per schema check alone (the compiled validator of the tool's schema, cached).

* CPU seconds per plain-text turn with SQLite memory on (issue 28 item 6): the same turns with
  a ``SqliteMemory`` file as memory and session store (keyword-only, the default FULL sync),
  the after-turn upkeep wired as the assembler wires it (consolidate, prune when due), a
  distinct message each turn; against the same turns with memory off, as process CPU time
  (``time.process_time``: the SQLite worker thread included, fsync waits not). Also the trips
  to the SQLite worker thread per turn.

Run: ``python benchmarks/bench_engine.py [--repeats 7] [--turns 300] [--calls 200]``
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Mapping
from typing import Any

from clawseed_edge.agent import AgentBuilder, BaseHook, SecurityPolicy
from clawseed_edge.api import (
    BaseTool,
    ChatMessage,
    ChatRequest,
    DeviceAction,
    RiskClass,
    ToolCall,
    ToolContext,
    ToolResult,
)
from clawseed_edge.testing import ScriptedProvider


class SwitchTool(BaseTool):
    """A hardware-like tool: describes a device write, returns at once."""

    name = "switch"
    description = "Switch the relay."
    risk = RiskClass.ACT
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {"on": {"type": "integer", "minimum": 0, "maximum": 1}},
        "required": ["on"],
        "additionalProperties": False,
    }

    def describe_action(self, arguments: Mapping[str, Any]) -> DeviceAction | None:
        return DeviceAction(
            "relay", "relay", "write", float(arguments.get("on", 1)), min_value=0, max_value=1
        )

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        return ToolResult.ok("switched")


class NoopHook(BaseHook):
    name = "noop"


def build(provider: ScriptedProvider) -> Any:
    policy = SecurityPolicy(autonomy="full", max_actions_per_hour=10**9)
    return (
        AgentBuilder()
        .provider(provider)
        .tools([SwitchTool()])
        .security_policy(policy)
        .hooks([NoopHook()])
        .platform("bench")
        .max_tool_iterations(2)
        .build()
    )


async def plain_turns(n: int) -> float:
    """Seconds per plain-text turn."""
    provider = ScriptedProvider(["ok"] * (n + 1))
    agent = build(provider)
    await agent.run("warm up")
    start = time.perf_counter()
    for _ in range(n):
        await agent.run("hello")
    return (time.perf_counter() - start) / n


async def cpu_per_turn(n: int, memory: bool) -> tuple[float, float]:
    """(process CPU seconds per plain-text turn, SQLite worker-thread trips per turn)."""
    import tempfile
    from pathlib import Path

    import aiosqlite

    from clawseed_edge.memory.sqlite import SqliteMemory

    provider = ScriptedProvider(["ok"] * (n + 1))
    trips = [0]
    execute = aiosqlite.Connection._execute

    async def counting(self: Any, fn: Any, *args: Any, **kwargs: Any) -> Any:
        trips[0] += 1
        return await execute(self, fn, *args, **kwargs)

    with tempfile.TemporaryDirectory() as tmp:
        async with SqliteMemory.open(Path(tmp) / "memory.db") as mem:
            builder = (
                AgentBuilder()
                .provider(provider)
                .security_policy(SecurityPolicy(autonomy="full"))
                .platform("bench")
            )
            if memory:
                builder = builder.memory(mem).session_store(mem)
            agent = builder.build()
            if memory:

                async def upkeep(context: ToolContext, text: str, answer: str) -> None:
                    await mem.consolidate(context.session_id, text, answer)
                    await mem.prune_if_due(30.0)

                agent.on_turn_done(upkeep)
            await agent.run("warm up")
            aiosqlite.Connection._execute = counting  # type: ignore[method-assign]
            try:
                start = time.process_time()
                for i in range(n):
                    await agent.run(f"hello number {i}, how is the porch light")
                cpu = time.process_time() - start
            finally:
                aiosqlite.Connection._execute = execute  # type: ignore[method-assign]
    return cpu / n, trips[0] / n


async def provider_baseline(n: int) -> float:
    """Seconds per direct provider.chat call."""
    provider = ScriptedProvider(["ok"] * n)
    request = ChatRequest((ChatMessage.system("s"), ChatMessage.user("hello")))
    start = time.perf_counter()
    for _ in range(n):
        await provider.chat(request)
    return (time.perf_counter() - start) / n


async def tool_turn(calls: int) -> float:
    """Seconds for one turn making ``calls`` tool calls then answering."""
    provider = ScriptedProvider(
        [
            "warm",
            ScriptedProvider.calls(*[ToolCall("switch", {"on": i % 2}) for i in range(calls)]),
            "done",
        ]
    )
    agent = build(provider)
    await agent.run("warm up")
    start = time.perf_counter()
    await agent.run("switch many times")
    return time.perf_counter() - start


async def tool_baseline(calls: int) -> float:
    tool, ctx = SwitchTool(), ToolContext()
    start = time.perf_counter()
    for i in range(calls):
        await tool.execute({"on": i % 2}, ctx)
    return (time.perf_counter() - start) / calls


def schema_check(n: int) -> float | None:
    """Seconds per schema check of one call (None where the engine has no schema check)."""
    try:
        from clawseed_edge.agent.arguments import SchemaValidator
    except ImportError:
        return None
    validator, tool = SchemaValidator(), SwitchTool()
    call = ToolCall("switch", {"on": 1})
    validator.problem(tool, call)  # compile once, as the engine does
    start = time.perf_counter()
    for _ in range(n):
        validator.problem(tool, call)
    return (time.perf_counter() - start) / n


async def main(repeats: int, turns: int, calls: int) -> None:
    turn_s, base_s, per_call, call_base = [], [], [], []
    mem_cpu, off_cpu, mem_trips = [], [], []
    for _ in range(repeats):
        cpu_on, trips = await cpu_per_turn(turns, memory=True)
        mem_cpu.append(cpu_on)
        mem_trips.append(trips)
        off_cpu.append((await cpu_per_turn(turns, memory=False))[0])
        turn_s.append(await plain_turns(turns))
        base_s.append(await provider_baseline(turns))
        one_plain = statistics.median(turn_s)
        per_call.append((await tool_turn(calls) - one_plain) / calls)
        call_base.append(await tool_baseline(calls))
    checks = [x for x in (schema_check(10_000) for _ in range(repeats)) if x is not None]
    t, b = statistics.median(turn_s), statistics.median(base_s)
    c, cb = statistics.median(per_call), statistics.median(call_base)
    rows = [
        (
            "plain-text turn",
            f"{t * 1e6:,.1f} us",
            f"{1 / t:,.0f} turns/s",
            f"{b * 1e6:,.2f} us (provider.chat)",
            f"{t / b:,.0f}x",
        ),
        (
            "tool call (full pipeline)",
            f"{c * 1e6:,.1f} us",
            f"{1 / c:,.0f} calls/s",
            f"{cb * 1e6:,.2f} us (tool.execute)",
            f"{c / cb:,.0f}x",
        ),
    ]
    on, off = statistics.median(mem_cpu), statistics.median(off_cpu)
    rows.append(
        (
            "CPU per plain turn, memory on",
            f"{on * 1e3:,.2f} ms",
            f"{statistics.median(mem_trips):.0f} SQLite trips/turn",
            f"{off * 1e3:,.2f} ms (memory off)",
            f"{on / off:,.1f}x",
        )
    )
    if checks:
        k = statistics.median(checks)
        rows.append(("schema check alone", f"{k * 1e6:,.2f} us", f"{1 / k:,.0f} checks/s", "", ""))
    head = ("measure", "median", "rate", "baseline (same run)", "ratio")
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    print(f"engine overhead, median of {repeats} runs ({turns} turns, {calls} calls per run)")
    for row in [head, *rows]:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)))
    verdict = "under" if c < 1e-3 else "OVER"
    print(f"aim: under 1 ms of engine overhead per tool call -> {verdict} ({c * 1e3:.3f} ms)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    asyncio.run(main(args.repeats, args.turns, args.calls))

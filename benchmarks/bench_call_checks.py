"""What the per-call checks (argument bounds and the JSON-schema check) cost a tool call.

Also times the credential scrubber that every tool result passes (``redact.scrub`` on the
benchmark tool's output and on a 2,000-character output), which is not part of the paired run.

One process runs the same 1,000-call turn with the checks on and with them replaced by no-ops,
alternating, and reports the medians and the median of the paired differences: on a shared,
noisy machine a paired difference is steadier than two separate runs. Also times each check
alone (best of several timeit runs).

Run: ``python benchmarks/bench_call_checks.py [--rounds 15] [--calls 1000]``
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
import timeit
from typing import Any

from bench_engine import SwitchTool, tool_turn

from clawseed_edge.agent import redact, turn
from clawseed_edge.agent.arguments import SchemaValidator, argument_problem
from clawseed_edge.api import ToolCall


def scrub_alone(text: str) -> float:
    """Microseconds to scrub ``text`` once, best of 7 runs."""
    n = 2_000
    return min(timeit.repeat(lambda: redact.scrub(text), number=n, repeat=7)) / n * 1e6


def alone() -> tuple[float, float]:
    """Microseconds of one bounds check and one schema check, best of 7 runs."""
    validator, tool = SchemaValidator(), SwitchTool()
    call = ToolCall("switch", {"on": 1})
    validator.problem(tool, call)  # compiled once, as in the engine
    n = 50_000
    bounds = min(timeit.repeat(lambda: argument_problem(call, 65_536), number=n, repeat=7))
    schema = min(timeit.repeat(lambda: validator.problem(tool, call), number=n, repeat=7))
    return bounds / n * 1e6, schema / n * 1e6


async def paired(rounds: int, calls: int) -> dict[str, list[float]]:
    real_problem, real_bounds = SchemaValidator.problem, turn.argument_problem

    def no_schema(self: Any, tool: Any, call: Any) -> None:
        return None

    def no_bounds(call: Any, max_chars: int) -> None:
        return None

    out: dict[str, list[float]] = {"on": [], "off": []}
    await tool_turn(10)  # warm up: imports, the schema compiled
    try:
        for i in range(rounds):
            # Alternate which goes first, so neither always inherits the other's garbage.
            for mode in ("on", "off") if i % 2 == 0 else ("off", "on"):
                on = mode == "on"
                SchemaValidator.problem = real_problem if on else no_schema  # type: ignore[method-assign]
                turn.argument_problem = real_bounds if on else no_bounds  # type: ignore[assignment]
                start = time.perf_counter()
                await tool_turn(calls)
                out[mode].append((time.perf_counter() - start) / calls * 1e6)
    finally:
        SchemaValidator.problem = real_problem  # type: ignore[method-assign]
        turn.argument_problem = real_bounds
    return out


def main(rounds: int, calls: int) -> None:
    bounds, schema = alone()
    runs = asyncio.run(paired(rounds, calls))
    on, off = statistics.median(runs["on"]), statistics.median(runs["off"])
    diff = statistics.median(a - b for a, b in zip(runs["on"], runs["off"], strict=True))
    print(f"per-call checks, {rounds} paired rounds of a {calls}-call turn")
    print(f"  bounds check alone       {bounds:6.2f} us")
    print(f"  schema check alone       {schema:6.2f} us")
    print(f"  tool call, checks on     {on:6.1f} us (whole turn / calls)")
    print(f"  tool call, checks off    {off:6.1f} us")
    print(f"  paired difference        {diff:6.1f} us per call")
    print(f"  scrub 'switched'         {scrub_alone('switched'):6.2f} us (every tool result)")
    print(f"  scrub 2,000 characters   {scrub_alone('x' * 2000):6.1f} us")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=1000)
    args = parser.parse_args()
    main(args.rounds, args.calls)

"""Scheduler timing drift: a 1-second job in the running service, alone and beside chat turns.

The service (``clawseed-edge run --sim`` in-process: sim board, offline demo model, memory in
SQLite, no gateway) runs a job every second that toggles a simulated LED through the agent's
tool path (SecurityPolicy included). Two phases of ``--seconds`` each, in the same process:

* **baseline**: the job alone;
* **chat**: the same job while ``--chatters`` tasks run chat turns back to back on the same
  agent (each turn: prompt, demo model, tool call, memory consolidation).

Runs are counted against the due times inside the phase's window (expected). Drift of one
run = when it started minus when it was due (``job_runs.started_at -
scheduled_for``, both Unix seconds, read back from state.db). Reported per phase: runs,
runs expected, skipped runs (a run that would have overlapped the previous one), median, p95
and max drift in milliseconds, and chat turns completed. Figures are reported, not asserted.

Run: ``python benchmarks/bench_scheduler_drift.py [--seconds 60] [--chatters 2]``
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import math
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

CONFIG = """
[provider]
name = "demo"
[autonomy]
level = "full"
max_actions_per_hour = 100000
[hardware]
board = "sim"
[[devices]]
name = "status_led"
pin = "GPIO17"
kind = "led"
[[jobs]]
name = "blink"
every = 1
tool = "gpio_toggle"
arguments = { device = "status_led" }
"""

CHAT = ["switch the status led on", "what is on?", "hello", "switch the status led off"]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def chat_loop(agent: Any, index: int, stop: asyncio.Event, done: list[int]) -> None:
    n = 0
    while not stop.is_set():
        await agent.run(CHAT[n % len(CHAT)], session_id=f"chat-{index}")
        n += 1
        done[0] += 1


async def phase(service: Any, seconds: float, chatters: int) -> dict[str, Any]:
    scheduler = service.scheduler
    store = scheduler.store
    before = {r.id for r in await store.runs("blink", limit=1000)}
    stop, done = asyncio.Event(), [0]
    tasks = [
        asyncio.create_task(chat_loop(service.runtime.agent, i, stop, done))
        for i in range(chatters)
    ]
    started = time.time()
    await asyncio.sleep(seconds)
    ended = time.time()
    stop.set()
    await asyncio.gather(*tasks)
    # A run due just before the window closed may not have started yet: give it a second.
    await asyncio.sleep(1.5)
    await scheduler.wait_idle()
    runs = [
        r
        for r in await store.runs("blink", limit=1000)
        if r.id not in before and started <= r.scheduled_for < ended
    ]
    job = await store.get("blink")
    anchor = job.created_at if job is not None else started
    # Due times in the window: anchor + k seconds, started <= t < ended.
    expected = math.ceil(ended - anchor) - math.ceil(started - anchor)
    ran = [r for r in runs if r.status in ("ok", "failed")]
    drift = [(r.started_at - r.scheduled_for) * 1000.0 for r in ran]
    return {
        "runs": len(ran),
        "expected": expected,
        "failed": sum(r.status == "failed" for r in ran),
        "skipped": sum(r.status == "skipped" for r in runs),
        "median_ms": statistics.median(drift) if drift else float("nan"),
        "p95_ms": pct(drift, 0.95) if drift else float("nan"),
        "max_ms": max(drift) if drift else float("nan"),
        "chat_turns": done[0],
    }


async def main(seconds: float, chatters: int) -> None:
    from clawseed_edge.config.file import load_config
    from clawseed_edge.service import Service, ServiceOptions

    logging.basicConfig(level=logging.ERROR)
    with tempfile.TemporaryDirectory() as home:
        os.environ["CLAWSEED_HOME"] = home
        path = Path(home) / "config.toml"
        path.write_text(CONFIG, encoding="utf-8")
        options = ServiceOptions(
            sim=True, gateway=False, control_socket=False, say=lambda line: None
        )
        async with Service(load_config(path), options) as service:
            await asyncio.sleep(2.0)  # warm up: imports, first runs
            results = {
                "baseline": await phase(service, seconds, 0),
                "chat": await phase(service, seconds, chatters),
            }
    print(f"1-second job for {seconds:g} s per phase; chat phase: {chatters} chat loops")
    print(
        f"{'phase':<9} {'runs':>9} {'skipped':>7} {'failed':>6} {'median ms':>9} "
        f"{'p95 ms':>7} {'max ms':>7} {'chat turns':>10}"
    )
    for name, r in results.items():
        print(
            f"{name:<9} {r['runs']:>4}/{r['expected']:<4} {r['skipped']:>7} {r['failed']:>6} "
            f"{r['median_ms']:>9.2f} {r['p95_ms']:>7.2f} {r['max_ms']:>7.2f} "
            f"{r['chat_turns']:>10}"
        )
    base, chat = results["baseline"], results["chat"]
    if base["median_ms"] > 0:
        print(f"median drift with chat / baseline: {chat['median_ms'] / base['median_ms']:.2f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--chatters", type=int, default=2)
    args = parser.parse_args()
    asyncio.run(main(args.seconds, args.chatters))

"""Benchmark session history and fact storing: what grows with the data a user accumulates.

Part 1, one-shot turns over a growing session. For each size (default 0, 10k and 100k stored
messages) a fresh ``$CLAWSEED_HOME`` gets a ``memory.db`` whose session ``bench`` already holds
that many messages; then ``clawseed-edge agent -m hello --session bench`` runs ``--runs`` times
in a child process (offline ``demo`` provider, no network), round-robin over sizes and
variants. Each run's wall time and peak RSS
(``ru_maxrss`` of that child, from ``os.wait4``) are taken; medians are reported, and ratios
against the empty session measured in the same run. Two variants:

* ``whole``: the engine as it is on this branch (``load_history(session_id)``: every row);
* ``tail``: the engine change proposed for issue 14 item 3 (``load_history(session_id,
  limit=max_history)``), applied in the child by wrapping ``SqliteMemory.load_history`` so
  that a missing limit becomes the configured ``max_history`` (50). Once the engine passes
  the limit itself, both variants measure the same thing.

Part 2, storing core facts one by one (``SqliteMemory.store``, one transaction each, default
``synchronous=FULL``): the median time per store over the first and the last ``--window``
of ``--facts`` stores (default 1,000 facts, window 50). Then the conflict check alone, before
and after issue 14 item 6, at ``--conflict-facts`` (300) facts: the same stores with the old
query (a plain JOIN, which SQLite drove from the core rows, running the FTS search once per
row) and with the current one (driven from the FTS table), with ``synchronous=NORMAL`` so that
the fsync does not hide the query.

Run:   .venv/bin/python benchmarks/bench_sessions.py
Quick: .venv/bin/python benchmarks/bench_sessions.py --sizes 0,10000 --runs 3 --facts 300
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from clawseed_edge.api import ChatMessage, MemoryEntry
from clawseed_edge.memory import sqlite as sqlite_module
from clawseed_edge.memory.sqlite import SqliteMemory

MAX_HISTORY = 50  # the [agent] max_history default

# The conflict query before issue 14 item 6 (kept here only to measure against), with the
# source column the conflict rule reads since (so both return the same rows).
OLD_CONFLICT_SQL = (
    "SELECT e.id, e.content, e.key, e.updated_at, json_extract(e.metadata, '$.source') "
    "FROM entries_fts JOIN entries e ON "
    "e.id = entries_fts.rowid WHERE entries_fts MATCH ? AND e.namespace=? AND "
    "e.category='core' AND e.id != ? AND json_extract(e.metadata, '$.superseded_by') IS NULL "
    "LIMIT 50"
)

# The child for the "tail" variant: the proposed engine call, until the engine makes it.
TAIL_CHILD = f"""
import sys
from clawseed_edge.memory.sqlite import SqliteMemory

_load = SqliteMemory.load_history

async def load_history(self, session_id, *, limit=None):
    return await _load(self, session_id, limit={MAX_HISTORY} if limit is None else limit)

SqliteMemory.load_history = load_history
from clawseed_edge.cli.main import main
sys.exit(main(sys.argv[1:]))
"""
WHOLE_CHILD = "import sys\nfrom clawseed_edge.cli.main import main\nsys.exit(main(sys.argv[1:]))"


async def populate(db: Path, messages: int) -> None:
    """Put ``messages`` messages (user/assistant pairs, ~60 characters each) in session bench."""
    async with SqliteMemory.open(db, load_vectors=False, synchronous="NORMAL") as memory:
        batch: list[ChatMessage] = []
        for i in range(messages):
            if i % 2 == 0:
                batch.append(ChatMessage.user(f"[2026-11-29 10:00:00 UTC] turn on the fan, #{i}"))
            else:
                batch.append(ChatMessage.assistant(f"The fan is on (answer number {i})."))
            if len(batch) == 5000:
                await memory.append_history("bench", batch)
                batch = []
        await memory.append_history("bench", batch)


def run_child(home: Path, child: str) -> tuple[float, float]:
    """One one-shot turn in a child process: (wall seconds, peak RSS in MB)."""
    argv = [
        sys.executable,
        "-c",
        child,
        "--config",
        str(home / "config.toml"),
        "agent",
        "-m",
        "hello",
        "--session",
        "bench",
    ]
    env = {**os.environ, "CLAWSEED_HOME": str(home)}
    started = time.perf_counter()
    quiet = [(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0)]  # the answer is not needed
    pid = os.posix_spawn(sys.executable, argv, env, file_actions=quiet)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"the child failed (exit {os.waitstatus_to_exitcode(status)})")
    return wall, usage.ru_maxrss / 1024  # ru_maxrss is KiB on Linux


def bench_turns(sizes: list[int], runs: int) -> None:
    print(f"one-shot `agent -m` turns, {runs} runs each, medians (ratio to 0 messages)")
    print(f"{'messages':>9} {'variant':>6} {'wall s':>8} {'ratio':>6} {'RSS MB':>8} {'ratio':>6}")
    variants = (("whole", WHOLE_CHILD), ("tail", TAIL_CHILD))
    with tempfile.TemporaryDirectory() as tmp:
        homes = {}
        for size in sizes:
            home = homes[size] = Path(tmp) / f"home-{size}"
            home.mkdir()
            (home / "config.toml").write_text('[provider]\nname = "demo"\n', encoding="utf-8")
            asyncio.run(populate(home / "memory.db", size))
        for size in sizes:
            for _, child in variants:
                run_child(homes[size], child)  # warm the page cache and the .pyc files
        # Round-robin over sizes and variants, so that a change in the machine's load during
        # the run falls on every case alike instead of on whichever ran then.
        samples: dict[tuple[int, str], list[tuple[float, float]]] = {}
        for _ in range(runs):
            for size in sizes:
                for variant, child in variants:
                    samples.setdefault((size, variant), []).append(run_child(homes[size], child))
    base: dict[str, tuple[float, float]] = {}
    for size in sizes:
        for variant, _ in variants:
            wall = statistics.median(s[0] for s in samples[(size, variant)])
            rss = statistics.median(s[1] for s in samples[(size, variant)])
            base.setdefault(variant, (wall, rss))
            print(
                f"{size:>9} {variant:>6} {wall:8.3f} {wall / base[variant][0]:6.2f} "
                f"{rss:8.1f} {rss / base[variant][1]:6.2f}"
            )


def fact(rng: random.Random, vocabulary: list[str], i: int) -> MemoryEntry:
    words = " ".join(rng.choice(vocabulary) for _ in range(8))
    return MemoryEntry(f"fact/{i}", f"the {words} is on pin {i}", "core")


async def store_facts(
    db: Path, count: int, *, synchronous: str = "FULL", seed: int = 7
) -> tuple[list[float], list[int]]:
    """Seconds, and SQLite VM steps (in hundreds), per ``store()`` of ``count`` core facts.

    The steps do not depend on the machine's load or disk; the seconds do.
    """
    rng = random.Random(seed)
    vocabulary = [f"w{n}" for n in range(2000)]
    times: list[float] = []
    steps: list[int] = []
    counter = [0]

    def count_steps() -> int:
        counter[0] += 1
        return 0

    async with SqliteMemory.open(db, load_vectors=False, synchronous=synchronous) as memory:  # type: ignore[arg-type]
        await memory._conn.set_progress_handler(count_steps, 100)
        for i in range(count):
            entry = fact(rng, vocabulary, i)
            counter[0] = 0
            started = time.perf_counter()
            await memory.store(entry)
            times.append(time.perf_counter() - started)
            steps.append(counter[0])
    return times, steps


def bench_facts(count: int, window: int, conflict_count: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        times, steps = asyncio.run(store_facts(Path(tmp) / "facts.db", count))
    first = statistics.median(times[:window]) * 1000
    last = statistics.median(times[-window:]) * 1000
    first_steps = statistics.median(steps[:window])
    last_steps = statistics.median(steps[-window:])
    print(f"\nstoring {count} core facts one by one (synchronous=FULL), median per store:")
    print(
        f"  first {window}: {first:.2f} ms   last {window}: {last:.2f} ms   ratio {last / first:.2f}"
    )
    print(
        f"  SQLite VM steps (x100): first {first_steps:g}, last {last_steps:g}, ratio "
        f"{last_steps / max(first_steps, 1):.2f}"
    )

    current = sqlite_module._CONFLICT_CANDIDATES
    results = {}
    for label, sql in (("before (JOIN)", OLD_CONFLICT_SQL), ("after (FTS-driven)", current)):
        sqlite_module._CONFLICT_CANDIDATES = sql
        try:
            with tempfile.TemporaryDirectory() as tmp:
                times, _ = asyncio.run(
                    store_facts(Path(tmp) / "c.db", conflict_count, synchronous="NORMAL")
                )
        finally:
            sqlite_module._CONFLICT_CANDIDATES = current
        results[label] = statistics.median(times[-window:]) * 1000
    print(
        f"\nconflict check at {conflict_count} facts (synchronous=NORMAL), median of the last "
        f"{window} stores:"
    )
    for label, ms in results.items():
        print(f"  {label:<20} {ms:.3f} ms per store")
    before, after = results.values()
    print(f"  ratio before/after: {before / after:.1f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes", default="0,10000,100000", help="stored messages, comma-separated"
    )
    parser.add_argument("--runs", type=int, default=5, help="runs per size and variant")
    parser.add_argument("--facts", type=int, default=1000, help="core facts to store")
    parser.add_argument("--window", type=int, default=50, help="stores per median")
    parser.add_argument("--conflict-facts", type=int, default=300)
    parser.add_argument("--parts", default="turns,facts", help="turns, facts or both")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    if sizes[0] != 0:
        sizes.insert(0, 0)  # the baseline of the ratios
    parts = args.parts.split(",")
    if "turns" in parts:
        bench_turns(sizes, args.runs)
    if "facts" in parts:
        bench_facts(args.facts, args.window, args.conflict_facts)


if __name__ == "__main__":
    main()

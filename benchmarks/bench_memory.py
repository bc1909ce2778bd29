"""Benchmark SqliteMemory: store throughput and recall latency against raw FTS5 + vec0.

For each size (default 1k, 10k, 100k entries) it builds one database in bulk (one
transaction, through ``SqliteMemory.store_many``), then measures in the same run:

* bulk populate rate (entries/s) and single ``store()`` latency (its own transaction, FULL
  sync), hybrid (with a vector) and keyword-only;
* ``recall()`` latency, median and p95, hybrid and keyword-only (limit 10);
* the raw baseline on the same data and queries: a vec0 KNN (k = 10) and an FTS5 MATCH
  ordered by bm25 (LIMIT 10), run directly on a sqlean connection with no aiosqlite hop;
* the ratio of our medians to the raw medians (hybrid vs KNN + FTS, keyword vs FTS).

Vectors are 384-d random unit vectors (uniform components, normalised; fixed seed); texts are
12 words drawn from a 5,000-word synthetic vocabulary, queries 3 words.

``--all-match N`` (issue 28 item 6): N keyword-only entries that ALL contain the query's words
(a year of daily entries about the same porch light). CPU time (``time.process_time``, the
worker thread included) of ``recall(limit=3)``, which ranks only the newest matches
(``FTS_CANDIDATES``), against the same search ranking every match (the query recall ran
before, on a raw connection, ``ORDER BY bm25 LIMIT 32``), in the same run.

Run:  .venv/bin/python benchmarks/bench_memory.py --sizes 1000,10000,100000
All match: .venv/bin/python benchmarks/bench_memory.py --sizes 0 --all-match 100000
Quick: .venv/bin/python benchmarks/bench_memory.py --sizes 1000,10000
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import statistics
import sys
import tempfile
import time
from array import array
from collections.abc import Sequence
from pathlib import Path

from clawseed_edge.api import MemoryEntry
from clawseed_edge.memory.connect import open_connection
from clawseed_edge.memory.recall import fts_match_expression
from clawseed_edge.memory.sqlite import SqliteMemory

DIMS = 384
VOCAB = 5000
WORDS_PER_TEXT = 12
LIMIT = 10


def unit_vector(rng: random.Random) -> array:
    raw = array("h", rng.randbytes(DIMS * 2))
    norm = sum(x * x for x in raw) ** 0.5 or 1.0
    return array("f", [x / norm for x in raw])


class TableEmbedder:
    """An EmbeddingProvider answering from a precomputed text -> vector table."""

    def __init__(self, table: dict[str, array]) -> None:
        self.table = table
        self.calls = 0

    @property
    def embedding_dimensions(self) -> int | None:
        return DIMS

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        return [self.table[t].tolist() for t in texts]


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1e3:8.2f} {percentile(values, 95) * 1e3:8.2f}"


async def bench_size(size: int, workdir: Path, queries: int, stores: int, seed: int) -> dict:
    rng = random.Random(seed)
    vocab = [f"w{i:04d}x" for i in range(VOCAB)]
    texts = [" ".join(rng.choices(vocab, k=WORDS_PER_TEXT)) + f" n{i}" for i in range(size)]
    table = {t: unit_vector(rng) for t in texts}
    qtexts = [" ".join(rng.choices(vocab, k=3)) for _ in range(queries)]
    for q in qtexts:
        table[q] = unit_vector(rng)
    extra = [" ".join(rng.choices(vocab, k=WORDS_PER_TEXT)) + f" s{i}" for i in range(stores)]
    for t in extra:
        table[t] = unit_vector(rng)
    embedder = TableEmbedder(table)
    path = workdir / f"bench_{size}.db"
    out: dict = {"size": size}

    async with SqliteMemory.open(path, embedder=embedder, min_relevance=0.0) as mem:
        entries = [MemoryEntry(f"e{i}", t, category="daily") for i, t in enumerate(texts)]
        t0 = time.perf_counter()
        await mem.store_many(entries)
        out["populate_s"] = time.perf_counter() - t0
        del entries
        lat = []
        for i, t in enumerate(extra):
            t0 = time.perf_counter()
            await mem.store(MemoryEntry(f"s{i}", t, category="daily"))
            lat.append(time.perf_counter() - t0)
        out["store_hybrid"] = lat
        for q in qtexts[:3]:
            await mem.recall(q, limit=LIMIT)  # warm up
        lat = []
        for q in qtexts:
            t0 = time.perf_counter()
            found = await mem.recall(q, limit=LIMIT)
            lat.append(time.perf_counter() - t0)
            assert found, q
        out["recall_hybrid"] = lat

    async with SqliteMemory.open(path, load_vectors=False, min_relevance=0.0) as mem:
        lat = []
        for i, t in enumerate(extra):
            t0 = time.perf_counter()
            await mem.store(MemoryEntry(f"k{i}", t, category="daily", namespace="kw"))
            lat.append(time.perf_counter() - t0)
        out["store_keyword"] = lat
        lat = []
        for q in qtexts:
            t0 = time.perf_counter()
            await mem.recall(q, limit=LIMIT)
            lat.append(time.perf_counter() - t0)
        out["recall_keyword"] = lat

    opened = await open_connection(path)
    await opened.conn.close()
    conn = _raw_connection(path)
    knn, fts = [], []
    for q in qtexts:
        blob = table[q].tobytes()
        expr = fts_match_expression(q)
        t0 = time.perf_counter()
        conn.execute(
            "SELECT rowid, distance FROM entries_vec WHERE embedding MATCH ? AND k = ? "
            "AND namespace = 'default'",
            (blob, LIMIT),
        ).fetchall()
        t1 = time.perf_counter()
        conn.execute(
            "SELECT rowid, bm25(entries_fts) FROM entries_fts WHERE entries_fts MATCH ? "
            "ORDER BY rank LIMIT ?",
            (expr, LIMIT),
        ).fetchall()
        t2 = time.perf_counter()
        knn.append(t1 - t0)
        fts.append(t2 - t1)
    conn.close()
    out["raw_knn"], out["raw_fts"] = knn, fts
    out["raw_both"] = [a + b for a, b in zip(knn, fts, strict=True)]
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(str(path) + suffix)
    return out


def _raw_connection(path: Path):  # type: ignore[no-untyped-def]
    import sqlite3

    import sqlite_vec

    driver = sqlite3
    if not hasattr(sqlite3.Connection, "enable_load_extension"):
        import sqlean as driver  # type: ignore[no-redef]
    conn = driver.connect(str(path))
    conn.enable_load_extension(True)
    conn.load_extension(sqlite_vec.loadable_path())
    return conn


def report(results: list[dict], argv: list[str]) -> None:
    print(f"command: {' '.join(argv)}")
    print(f"python {sys.version.split()[0]}; {DIMS}-d vectors; recall limit {LIMIT}")
    print()
    print(f"{'entries':>8} {'bulk/s':>9} {'store hyb ms':>13} {'store kw ms':>12}")
    for r in results:
        print(
            f"{r['size']:>8} {r['size'] / r['populate_s']:>9.0f} "
            f"{statistics.median(r['store_hybrid']) * 1e3:>13.2f} "
            f"{statistics.median(r['store_keyword']) * 1e3:>12.2f}"
        )
    print()
    print("recall latency, ms: median p95")
    print(
        f"{'entries':>8} {'hybrid':>17} {'keyword':>17} {'raw knn':>17} {'raw fts':>17}"
        f" {'raw knn+fts':>17} {'hyb/raw':>8} {'kw/fts':>7}"
    )
    for r in results:
        hyb = statistics.median(r["recall_hybrid"]) / statistics.median(r["raw_both"])
        kw = statistics.median(r["recall_keyword"]) / statistics.median(r["raw_fts"])
        print(
            f"{r['size']:>8} {ms(r['recall_hybrid'])} {ms(r['recall_keyword'])} "
            f"{ms(r['raw_knn'])} {ms(r['raw_fts'])} {ms(r['raw_both'])} {hyb:>8.2f} {kw:>7.2f}"
        )


async def bench_all_match(size: int, workdir: Path, queries: int, seed: int) -> None:
    rng = random.Random(seed)
    vocab = [f"w{i:04d}x" for i in range(VOCAB)]
    path = workdir / "all_match.db"
    query = "is the porch light on"
    async with SqliteMemory.open(path, load_vectors=False, synchronous="NORMAL") as mem:
        await mem.store_many(
            [
                MemoryEntry(
                    f"d{i}", f"porch light {' '.join(rng.choices(vocab, k=10))} n{i}", "daily"
                )
                for i in range(size)
            ]
        )
        await mem.recall(query, limit=3)  # warm the page cache, as the baseline below
        ours = []
        for _ in range(queries):
            t0 = time.process_time()
            found = await mem.recall(query, limit=3)
            ours.append(time.process_time() - t0)
            assert len(found) == 3
    conn = _raw_connection(path)
    expr = fts_match_expression(query)
    unbounded = (
        "SELECT e.*, bm25(entries_fts) AS s FROM entries_fts JOIN entries e "
        "ON e.id = entries_fts.rowid WHERE entries_fts MATCH ? AND e.namespace = 'default' "
        "AND json_extract(e.metadata, '$.superseded_by') IS NULL ORDER BY s LIMIT 32"
    )
    conn.execute(unbounded, (expr,)).fetchall()
    raw = []
    for _ in range(queries):
        t0 = time.process_time()
        conn.execute(unbounded, (expr,)).fetchall()
        raw.append(time.process_time() - t0)
    conn.close()
    o, r = statistics.median(ours), statistics.median(raw)
    print(f"all {size} entries match the query; CPU per recall, median of {queries}:")
    print(f"  recall (newest matches ranked) {o * 1e3:8.2f} ms")
    print(f"  every match ranked (raw, before) {r * 1e3:6.2f} ms   ratio {o / r:.3f}")


async def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000", help="comma-separated")
    parser.add_argument("--queries", type=int, default=50, help="recall queries per size")
    parser.add_argument("--stores", type=int, default=100, help="single stores per size")
    parser.add_argument("--seed", type=int, default=4)
    parser.add_argument("--dir", help="where to build the databases (default: a temp dir)")
    parser.add_argument("--all-match", type=int, default=0, help="entries (see doc); 0: skip")
    args = parser.parse_args(argv[1:])
    sizes = [int(s) for s in args.sizes.split(",") if s.strip() and int(s) > 0]
    results = []
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        for size in sizes:
            t0 = time.perf_counter()
            results.append(await bench_size(size, Path(tmp), args.queries, args.stores, args.seed))
            print(f"# {size} entries done in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        if args.all_match:
            await bench_all_match(args.all_match, Path(tmp), min(args.queries, 20), args.seed)
    if results:
        report(results, ["python", *argv])
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main(sys.argv)))

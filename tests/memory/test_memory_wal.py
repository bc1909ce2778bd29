"""The WAL and the page cache: bounded for a 512 MB board (issue 14 item 9)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from clawseed_edge.api import MemoryEntry
from clawseed_edge.memory.sqlite import (
    CACHE_SIZE_KIB,
    JOURNAL_SIZE_LIMIT,
    WAL_AUTOCHECKPOINT_PAGES,
    SqliteMemory,
)


def _wal_size(db: Path) -> int:
    wal = db.with_name(db.name + "-wal")
    return wal.stat().st_size if wal.exists() else 0


def _big_batch(count: int = 1500) -> list[MemoryEntry]:
    return [MemoryEntry(f"log/{i}", f"entry {i} " + "x" * 2000, "daily") for i in range(count)]


async def test_pragmas_are_set(tmp_path: Path) -> None:
    async with SqliteMemory.open(tmp_path / "m.db", load_vectors=False) as memory:
        conn = memory._conn
        (cache,) = await conn.execute_fetchall("PRAGMA cache_size")
        (limit,) = await conn.execute_fetchall("PRAGMA journal_size_limit")
        (pages,) = await conn.execute_fetchall("PRAGMA wal_autocheckpoint")
    # a negative cache_size is KiB, a positive one pages: ours is KiB
    assert (cache[0], limit[0], pages[0]) == (
        -CACHE_SIZE_KIB,
        JOURNAL_SIZE_LIMIT,
        WAL_AUTOCHECKPOINT_PAGES,
    )


async def test_wal_is_truncated_on_close_while_another_process_has_it_open(
    tmp_path: Path,
) -> None:
    # With another process connected (the CLI beside the service) SQLite does not delete the
    # WAL on close; our TRUNCATE checkpoint empties it. (A second connection in this process
    # would not do where the store runs on sqlean, with vectors: sqlite3 and sqlean are two
    # SQLite libraries whose POSIX locks do not see each other.)
    db = tmp_path / "m.db"
    memory = await SqliteMemory.open(db, load_vectors=False)
    other = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
        "c.execute('SELECT COUNT(*) FROM entries').fetchall(); print('ready', flush=True); "
        "sys.stdin.readline(); print(c.execute('SELECT COUNT(*) FROM entries').fetchone()[0])",
        str(db),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    assert other.stdin is not None and other.stdout is not None
    try:
        assert await other.stdout.readline() == b"ready\n"
        await memory.store_many(_big_batch())
        assert _wal_size(db) > JOURNAL_SIZE_LIMIT
        await memory.aclose()
        assert _wal_size(db) == 0
        out, _ = await other.communicate(b"\n")
        assert out.strip() == b"1500"  # nothing was lost by the truncation
    finally:
        if other.returncode is None:
            other.kill()
            await other.wait()
        await memory.aclose()


async def test_wal_shrinks_to_the_limit_while_running(tmp_path: Path) -> None:
    # A large transaction grows the WAL; once it is checkpointed and reused, the file is cut
    # back to journal_size_limit instead of staying at its high-water mark.
    db = tmp_path / "m.db"
    async with SqliteMemory.open(db, load_vectors=False) as memory:
        await memory.store_many(_big_batch())
        assert _wal_size(db) > JOURNAL_SIZE_LIMIT
        for i in range(3):
            await memory.store(MemoryEntry(f"small/{i}", "a short fact", "core"))
        assert _wal_size(db) <= JOURNAL_SIZE_LIMIT

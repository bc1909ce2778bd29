"""A process killed (SIGKILL) in the middle of 1,000 writes loses no committed entry."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

from clawseed_edge.memory.sqlite import SqliteMemory

CHILD = """
import asyncio, sys
from clawseed_edge.api import MemoryEntry
from clawseed_edge.memory.sqlite import SqliteMemory

async def main(path):
    async with SqliteMemory.open(path) as mem:
        for i in range(1000):
            key = f"k{i:04d}"
            await mem.store(MemoryEntry(key, f"fact number {i} " + "x" * 200, category="daily"))
            print(key, flush=True)

asyncio.run(main(sys.argv[1]))
"""


def _run_and_kill(path: Path, after_lines: int) -> list[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    printed: list[str] = []
    try:
        for line in proc.stdout:
            printed.append(line.strip())
            if len(printed) >= after_lines:
                os.kill(proc.pid, signal.SIGKILL)
                break
        # Lines already in the pipe were committed before they were printed.
        printed.extend(line.strip() for line in proc.stdout if line.strip())
    finally:
        proc.kill()
        proc.wait(timeout=30)
    return printed


async def test_sigkill_mid_writes_loses_no_committed_entry(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    printed = await asyncio.to_thread(_run_and_kill, path, 120)
    assert len(printed) >= 120
    assert len(printed) < 1000, "the child finished before it was killed: raise the count"
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        conn.execute("INSERT INTO entries_fts (entries_fts) VALUES ('integrity-check')")
    async with SqliteMemory.open(path) as mem:
        assert await mem.health_check()
        keys = {e.key for e in await mem.export()}
        assert set(printed) <= keys
        assert len(keys) - len(printed) <= 1  # at most the write in flight when killed
        found = await mem.recall("fact", mode="keyword", limit=len(keys) + 10)
        assert {e.key for e in found} == keys  # the FTS index matches the table

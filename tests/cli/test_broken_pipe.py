"""Output piped into a reader that goes away (``memory list | head -1``) ends quietly."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from clawseed_edge.api import MemoryEntry
from clawseed_edge.memory.sqlite import SqliteMemory


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "memory.db"

    async def fill() -> None:
        async with SqliteMemory.open(path) as mem:
            for i in range(50):
                await mem.store(MemoryEntry(f"note{i}", f"entry number {i} " * 8))

    asyncio.run(fill())
    return path


COMMANDS = [
    ["memory", "list", "--db", "{db}"],
    ["memory", "export", "--db", "{db}"],
    ["boards", "list"],
    ["tools", "list", "--sim"],
    ["agent", "--sim", "-m", "turn on the red led"],
]


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_a_closed_pipe_gives_no_traceback(db: Path, argv: list[str]) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first line is written: EPIPE, always
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "clawseed_edge", *(a.format(db=db) for a in argv)],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        os.close(write_end)
    assert "Traceback" not in proc.stderr
    assert "BrokenPipeError" not in proc.stderr
    assert "Exception ignored" not in proc.stderr
    assert proc.returncode == 1, proc.stderr

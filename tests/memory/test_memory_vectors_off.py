"""A store without an embedder stays on the standard sqlite3 and leaves the vectors of an
older database alone; the next store with an embedder finds them right (issue 28 item 3)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from clawseed_edge.api import MemoryEntry
from clawseed_edge.memory.connect import STDLIB_LOADS_EXTENSIONS
from clawseed_edge.memory.sqlite import SqliteMemory
from clawseed_edge.memory.vectors import STALE_KEY

FACTS = {
    "fan": "the fan relay is on pin GPIO23",
    "pump": "the water pump runs from relay two",
    "door": "the greenhouse door sensor is on GPIO5",
}


async def _vector_keys(mem: SqliteMemory) -> set[str]:
    async with mem._read("test") as conn:
        rows = await conn.execute_fetchall(
            "SELECT e.key FROM entries e JOIN entries_vec v ON v.rowid = e.id"
        )
    return {r[0] for r in rows}


async def test_a_store_without_embedder_uses_the_standard_sqlite3(tmp_path: Path) -> None:
    async with SqliteMemory.open(tmp_path / "m.db") as mem:
        assert mem.driver == "sqlite3"
        assert type(mem._conn._conn) is sqlite3.Connection
        assert not mem.vectors_loaded and mem.effective_mode == "keyword"
        assert "no embedding provider" in mem.vector_reason


async def test_a_store_with_an_embedder_loads_vectors(tmp_path: Path, make_embedder: Any) -> None:
    async with SqliteMemory.open(tmp_path / "m.db", embedder=make_embedder()) as mem:
        assert mem.vectors_loaded and mem.vector_reason == "" and mem.effective_mode == "hybrid"
        assert mem.driver == ("sqlite3" if STDLIB_LOADS_EXTENSIONS else "sqlean")


async def test_vectors_of_an_older_database_survive_a_period_without_embedder(
    tmp_path: Path, make_embedder: Any
) -> None:
    db = tmp_path / "m.db"
    async with SqliteMemory.open(db, embedder=make_embedder()) as mem:
        for key, content in FACTS.items():
            await mem.store(MemoryEntry(key, content))
        assert await _vector_keys(mem) == set(FACTS)

    # No embedder: the vec0 table is there, sqlite-vec is not loaded; everything still works.
    async with SqliteMemory.open(db) as mem:
        assert mem.driver == "sqlite3" and not mem.vectors_loaded
        assert [e.key for e in await mem.recall("fan relay")] == ["fan"]
        await mem.store(MemoryEntry("light", "the porch light is on GPIO18"))  # new
        await mem.store(MemoryEntry("pump", "the water pump now runs from GPIO12"))  # updated
        assert await mem.forget("door")
        assert [e.key for e in await mem.recall("porch light")] == ["light"]
        assert [e.key for e in await mem.recall("pump GPIO12")] == ["pump"]
        assert await mem.get("door") is None

    embedder = make_embedder()
    async with SqliteMemory.open(db, embedder=embedder) as mem:
        assert mem.vectors_loaded
        # door's orphan and pump's stale vector (made from its old text) are gone; fan's stays
        assert await _vector_keys(mem) == {"fan"}
        async with mem._read("test") as conn:
            assert (
                await conn.execute_fetchall(
                    "SELECT value FROM memory_meta WHERE key = ?", (STALE_KEY,)
                )
                == []
            )
        # the paraphrase finds fan by its vector only ("ventilator" -> fan, "contactor" -> relay)
        assert [e.key for e in await mem.recall("ventilator contactor", mode="vector")] == ["fan"]
        assert await mem.backfill_vectors() == 2
        assert await _vector_keys(mem) == {"fan", "pump", "light"}
        assert "the water pump now runs from GPIO12" in embedder.texts  # the new text


async def test_an_import_with_old_times_is_caught_by_its_text(
    tmp_path: Path, make_embedder: Any
) -> None:
    # An entry stored with its own (old) updated_at is not "changed since the mark" by time;
    # its text was never embedded, so its vector goes all the same.
    db = tmp_path / "m.db"
    async with SqliteMemory.open(db, embedder=make_embedder()) as mem:
        await mem.store(MemoryEntry("fan", FACTS["fan"]))
    async with SqliteMemory.open(db) as mem:
        await mem.store(MemoryEntry("fan", "the fan is gone", created_at=1.0, updated_at=1.0))
    async with SqliteMemory.open(db, embedder=make_embedder()) as mem:
        assert await _vector_keys(mem) == set()


def test_no_embedder_imports_neither_sqlean_nor_sqlite_vec(tmp_path: Path) -> None:
    """Memory without an embedder, state.db and a caught driver error: one SQLite library.
    Then a store with an embedder in the same process: sqlite-vec (and sqlean where the
    standard module cannot load it) arrive, and ``driver_errors()`` covers the new driver."""
    code = f"""
import asyncio, sys
from pathlib import Path
sys.path.insert(0, {str(Path(__file__).parent)!r})
from conftest import FakeEmbedder
from clawseed_edge.memory.connect import driver_errors
from clawseed_edge.memory.sqlite import SqliteMemory
from clawseed_edge.state.db import StateDB

loaded = lambda: [m for m in ("sqlean", "sqlite_vec") if m in sys.modules]

async def main():
    async with await StateDB.open(Path({str(tmp_path / "state.db")!r})):
        pass
    async with SqliteMemory.open(Path({str(tmp_path / "a.db")!r})) as mem:
        try:
            await mem._conn.execute("SELECT * FROM no_such_table")
        except driver_errors():
            pass
    print(loaded(), len(driver_errors()))
    async with SqliteMemory.open(Path({str(tmp_path / "b.db")!r}), embedder=FakeEmbedder()) as mem:
        try:
            await mem._conn.execute("SELECT * FROM no_such_table")
        except driver_errors():
            pass
        print(loaded(), len(driver_errors()), mem.driver, mem.vectors_loaded)

asyncio.run(main())
"""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert out.returncode == 0, out.stderr
    idle, embedding = out.stdout.strip().splitlines()
    assert idle == "[] 1"
    if STDLIB_LOADS_EXTENSIONS:
        assert embedding == "['sqlite_vec'] 1 sqlite3 True"
    else:
        assert embedding == "['sqlean', 'sqlite_vec'] 2 sqlean True"

"""Driver choice and sqlite-vec loading."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from clawseed_edge.api import MemoryStoreError
from clawseed_edge.memory.connect import _load_vec, driver_errors, open_connection


async def test_vectors_load_through_the_right_driver(tmp_path: Path) -> None:
    opened = await open_connection(tmp_path / "m.db")
    try:
        stdlib_can_load = hasattr(sqlite3.Connection, "enable_load_extension")
        assert opened.driver == ("sqlite3" if stdlib_can_load else "sqlean")
        assert opened.vectors and opened.reason == ""
        rows = await opened.conn.execute_fetchall("SELECT vec_version()")
        assert rows[0][0].startswith("v")
    finally:
        await opened.conn.close()


async def test_skipping_vectors_gives_a_plain_connection(tmp_path: Path) -> None:
    opened = await open_connection(tmp_path / "m.db", load_vectors=False)
    try:
        assert opened.driver == "sqlite3"
        assert not opened.vectors and "disabled" in opened.reason
        with pytest.raises(driver_errors()):
            await opened.conn.execute_fetchall("SELECT vec_version()")
    finally:
        await opened.conn.close()


def test_a_connection_that_cannot_load_extensions_says_why() -> None:
    assert "cannot load extensions" in _load_vec(object())


async def test_unopenable_path_raises_memory_store_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(MemoryStoreError, match="cannot open memory database"):
        await open_connection(tmp_path / "file" / "m.db")


@pytest.mark.parametrize("stdlib", [True, False], ids=["stdlib-loads", "as-installed"])
def test_only_vectors_bring_a_second_sqlite_library(tmp_path: Path, stdlib: bool) -> None:
    """A plain connection and state.db, a driver error caught: the standard sqlite3 only. Then
    a connection with sqlite-vec: sqlean is imported only where the standard module cannot load
    extensions, and then ``driver_errors()`` catches its errors too. ``stdlib-loads`` stands
    for a Python whose sqlite3 can load extensions (Debian's)."""
    import subprocess
    import sys

    code = f"""
import asyncio, sqlite3, sys
from pathlib import Path
import clawseed_edge.memory.connect as connect
import clawseed_edge.state.db as db
if {stdlib!r}:
    connect.STDLIB_LOADS_EXTENSIONS = True

async def caught(opened):
    try:
        await opened.conn.execute("SELECT * FROM no_such_table")
    except connect.driver_errors():
        return True
    finally:
        await opened.conn.close()

async def main():
    plain = await connect.open_connection(Path({str(tmp_path / "m.db")!r}), load_vectors=False)
    assert await caught(plain)
    async with await db.StateDB.open(Path({str(tmp_path / "state.db")!r})):
        pass
    print(plain.driver, "sqlean" in sys.modules, "sqlite_vec" in sys.modules)
    vec = await connect.open_connection(Path({str(tmp_path / "v.db")!r}))
    assert await caught(vec)
    print(vec.driver, "sqlean" in sys.modules, "sqlite_vec" in sys.modules)

asyncio.run(main())
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    plain, vec = out.stdout.splitlines()
    assert plain == "sqlite3 False False"
    if stdlib or hasattr(sqlite3.Connection, "enable_load_extension"):
        assert vec == "sqlite3 False True"
    else:
        assert vec == "sqlean True True"

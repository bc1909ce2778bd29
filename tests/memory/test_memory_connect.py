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


@pytest.mark.parametrize("stdlib", [True, False], ids=["stdlib-serves", "as-installed"])
def test_one_sqlite_library_per_process(tmp_path: Path, stdlib: bool) -> None:
    """Memory and state.db opened, a driver error caught: sqlean is imported only when it is
    the driver (it maps a second libsqlite when imported, even for its exception class).
    ``stdlib-serves`` stands for a Python whose sqlite3 can load extensions (Debian's)."""
    import subprocess
    import sys

    code = f"""
import asyncio, sqlite3, sys
from pathlib import Path
import clawseed_edge.memory.connect as connect
import clawseed_edge.state.db as db
if {stdlib!r}:
    connect.sqlite_driver = db.sqlite_driver = lambda: sqlite3

async def main():
    opened = await connect.open_connection(Path({str(tmp_path / "m.db")!r}))
    try:
        try:
            await opened.conn.execute("SELECT * FROM no_such_table")
        except connect.driver_errors():
            pass
    finally:
        await opened.conn.close()
    async with await db.StateDB.open(Path({str(tmp_path / "state.db")!r})):
        pass
    print(connect.sqlite_driver().__name__, "sqlean" in sys.modules)

asyncio.run(main())
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    driver, sqlean_loaded = out.stdout.split()
    assert sqlean_loaded == ("True" if driver == "sqlean" else "False"), out.stdout

"""state.db: migrations, private file, tokens stored hashed, revocation, closed refusal."""

from __future__ import annotations

import sqlite3
import stat
from pathlib import Path

import pytest

from clawseed_edge.api import ResourceClosed
from clawseed_edge.state import MIGRATIONS, PairingTokens, StateDB
from clawseed_edge.state.db import StateError


async def test_a_new_file_is_private_and_migrated(tmp_path: Path) -> None:
    async with await StateDB.open(tmp_path / "state.db") as db:
        version = await db.schema_version()
    assert version == len(MIGRATIONS)
    assert stat.S_IMODE((tmp_path / "state.db").stat().st_mode) == 0o600


async def test_tokens_verify_list_revoke_and_are_stored_hashed(tmp_path: Path) -> None:
    now = [100.0]
    async with await StateDB.open(tmp_path / "state.db") as db:
        tokens = PairingTokens(db, clock=lambda: now[0])
        issued = await tokens.issue("phone")
        now[0] = 200.0
        info = await tokens.verify(issued.token)
        wrong = await tokens.verify(issued.token[:-1] + ("A" if issued.token[-1] != "A" else "B"))
        listed = await tokens.list()
        revoked = await tokens.revoke(issued.info.id)
        after = await tokens.verify(issued.token)
        revoked_again = await tokens.revoke(issued.info.id)
    assert info is not None and info.name == "phone" and info.last_used_at == 200.0
    assert wrong is None
    assert [t.id for t in listed] == [issued.info.id] and listed[0].last_used_at == 200.0
    assert revoked and after is None and not revoked_again
    raw = sqlite3.connect(tmp_path / "state.db").execute("SELECT * FROM pairing_tokens").fetchall()
    assert raw == []


async def test_a_file_from_a_newer_version_is_refused_with_advice(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 5}")
    conn.close()
    with pytest.raises(StateError, match="upgrade clawseed-edge"):
        await StateDB.open(path)


async def test_a_closed_db_refuses_work(tmp_path: Path) -> None:
    db = await StateDB.open(tmp_path / "state.db")
    await db.aclose()
    await db.aclose()  # idempotent
    with pytest.raises(ResourceClosed, match="closed"):
        await db.fetchall("SELECT 1")


async def test_state_and_memory_without_vectors_share_the_standard_sqlite3(
    tmp_path: Path,
) -> None:
    from clawseed_edge.memory.sqlite import SqliteMemory

    async with await StateDB.open(tmp_path / "state.db") as db:
        async with SqliteMemory.open(tmp_path / "memory.db") as memory:  # no embedder
            drivers = {db.driver, memory.driver}
            connections = {
                type(db._conn._conn).__module__.split(".")[0],
                type(memory._conn._conn).__module__.split(".")[0],
            }
    assert drivers == connections == {"sqlite3"}

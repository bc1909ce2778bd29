"""SqliteMemory basics: lifecycle, upsert, list/export, migrations, sessions, errors."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from clawseed_edge.api import (
    ChatMessage,
    Memory,
    MemoryEntry,
    MemoryStoreError,
    SessionStore,
    ToolCall,
)
from clawseed_edge.memory.schema import SCHEMA_VERSION
from clawseed_edge.memory.sqlite import SqliteMemory


async def test_implements_the_api_protocols(memory: SqliteMemory) -> None:
    assert isinstance(memory, Memory)
    assert isinstance(memory, SessionStore)
    assert await memory.health_check()


async def test_upsert_keeps_created_and_updates_content(memory: SqliteMemory) -> None:
    first = await memory.store(MemoryEntry("fan", "fan on GPIO23", importance=0.4))
    await asyncio.sleep(0.01)
    second = await memory.store(MemoryEntry("fan", "fan on GPIO24", importance=0.8))
    assert second.created_at == first.created_at and second.updated_at > first.updated_at
    got = await memory.get("fan")
    assert got is not None and got.content == "fan on GPIO24" and got.importance == 0.8
    assert await memory.count() == 1
    assert [e.key for e in await memory.recall("GPIO24", mode="keyword")] == ["fan"]
    assert await memory.recall("GPIO23", mode="keyword") == []


async def test_list_and_export_filters(memory: SqliteMemory) -> None:
    t0 = time.time()
    await memory.store(MemoryEntry("a", "one", category="core", updated_at=t0 - 100))
    await memory.store(MemoryEntry("b", "two", category="daily", session_id="s1", updated_at=t0))
    await memory.store(MemoryEntry("c", "three", namespace="other", updated_at=t0 - 50))
    assert [e.key for e in await memory.list()] == ["b", "a"]
    assert [e.key for e in await memory.list(namespace=None)] == ["b", "c", "a"]
    assert [e.key for e in await memory.list(category="daily")] == ["b"]
    assert [e.key for e in await memory.export(session_id="s1")] == ["b"]
    assert [e.key for e in await memory.export(since=t0 - 60, until=t0)] == ["c"]
    assert [e.key for e in await memory.export(namespace="other")] == ["c"]
    assert await memory.forget("a") and not await memory.forget("a")


async def test_bad_input_is_refused_with_a_clear_error(memory: SqliteMemory) -> None:
    with pytest.raises(MemoryStoreError, match="key is empty"):
        await memory.store(MemoryEntry(" ", "x"))
    with pytest.raises(MemoryStoreError, match="empty namespace"):
        await memory.store(MemoryEntry("k", "x", namespace=""))
    assert await memory.count() == 0


async def test_migrations_are_recorded_and_idempotent(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    async with SqliteMemory.open(path):
        pass
    async with SqliteMemory.open(path) as mem:
        await mem.store(MemoryEntry("k", "v"))
    with sqlite3.connect(path) as conn:
        versions = [r[0] for r in conn.execute("SELECT version FROM schema_migrations")]
        journal = conn.execute("PRAGMA journal_mode").fetchone()[0]
    assert versions == list(range(1, SCHEMA_VERSION + 1))
    assert journal == "wal"


async def test_aclose_is_idempotent_and_closed_store_refuses(tmp_path: Path) -> None:
    mem = await SqliteMemory.open(tmp_path / "m.db")
    await mem.aclose()
    await mem.aclose()
    assert not await mem.health_check()
    with pytest.raises(MemoryStoreError, match="closed"):
        await mem.get("k")


async def test_concurrent_stores_do_not_interleave_transactions(memory: SqliteMemory) -> None:
    await asyncio.gather(*(memory.store(MemoryEntry(f"k{i}", f"fact {i}")) for i in range(40)))
    assert await memory.count() == 40


async def test_cancelled_store_is_rolled_back_and_store_keeps_working(
    memory: SqliteMemory,
) -> None:
    task = asyncio.create_task(memory.store(MemoryEntry("x", "maybe")))
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await memory.store(MemoryEntry("y", "surely"))
    assert await memory.get("y") is not None


async def test_sessions_persist_across_reopen(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    messages = [
        ChatMessage.user("Switch the fan on please\nand tell me"),
        ChatMessage.assistant("", (ToolCall("relay_set", {"on": True}, "c1"),)),
        ChatMessage.tool("c1", "ok", name="relay_set"),
        ChatMessage.assistant("The fan is on."),
    ]
    async with SqliteMemory.open(path) as mem:
        await mem.append_history("phone", messages[:2])
        await mem.append_history("phone", messages[2:])
        await mem.append_history("cli", [ChatMessage.user("hi")])
    async with SqliteMemory.open(path) as mem:
        assert await mem.load_history("phone") == messages
        info = await mem.session_info("phone")
        assert info is not None and info.message_count == 4
        assert info.title == "Switch the fan on please"
        assert {s.session_id for s in await mem.list_sessions()} == {"phone", "cli"}
        assert await mem.delete_session("cli") and not await mem.delete_session("cli")
        assert await mem.load_history("cli") == []
        assert await mem.load_history("never") == []


async def test_driver_errors_become_memory_store_errors(memory: SqliteMemory) -> None:
    async with memory._read("test") as conn:  # the error translation boundary
        await conn.execute("DROP TABLE session_messages")
    with pytest.raises(MemoryStoreError, match="load history failed"):
        await memory.load_history("x")
    await memory.store(MemoryEntry("still", "works"))


async def test_wrong_dimension_embedder_falls_back_to_keyword(
    tmp_path: Path, make_embedder: Any
) -> None:
    async with SqliteMemory.open(tmp_path / "m.db", embedder=make_embedder(384)) as mem:
        await mem.store(MemoryEntry("fan", "fan relay"))
    async with SqliteMemory.open(tmp_path / "m.db", embedder=make_embedder(16)) as mem:
        assert mem.effective_mode == "keyword"
        assert [e.key for e in await mem.recall("fan")] == ["fan"]


async def test_store_many_is_one_batch_and_all_or_nothing(
    memory: SqliteMemory, embedder: Any
) -> None:
    entries = [
        MemoryEntry(f"k{i}", f"fact {i} about relay {i}", category="daily") for i in range(10)
    ]
    stored = await memory.store_many(entries)
    assert [e.key for e in stored] == [e.key for e in entries]
    assert embedder.calls == 1 and len(embedder.texts) == 10
    with pytest.raises(MemoryStoreError, match="key is empty"):
        await memory.store_many([MemoryEntry("new", "x"), MemoryEntry("", "y")])
    assert await memory.get("new") is None
    assert await memory.count() == 10
    assert [e.key for e in await memory.recall("fact 3 about relay 3", mode="vector", limit=1)] == [
        "k3"
    ]

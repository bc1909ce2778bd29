"""A turn's SQLite work in few trips to the worker thread, and keyword ranking bounded."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiosqlite
import pytest

from clawseed_edge.api import ChatMessage, MemoryEntry, MemoryStoreError
from clawseed_edge.memory import sqlite as sqlite_module
from clawseed_edge.memory.sqlite import SqliteMemory


@pytest.fixture
def trips(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every call sent to an aiosqlite worker thread, by the name of what it ran."""
    seen: list[str] = []
    execute = aiosqlite.Connection._execute

    async def counting(self: Any, fn: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(getattr(fn, "__name__", type(fn).__name__))
        return await execute(self, fn, *args, **kwargs)

    monkeypatch.setattr(aiosqlite.Connection, "_execute", counting)
    yield seen


async def test_a_turns_writes_take_one_trip_each(tmp_path: Path, trips: list[str]) -> None:
    async with SqliteMemory.open(tmp_path / "m.db", load_vectors=False) as memory:
        await memory.prune_if_due(30.0)  # the first reads when it last ran, then prunes
        trips.clear()
        await memory.recall("is the porch light on", limit=3)
        recall = len(trips)
        await memory.append_history(
            "phone", [ChatMessage.user("is the porch light on"), ChatMessage.assistant("yes")]
        )
        append = len(trips) - recall
        await memory.consolidate("phone", "remember that the porch light is on GPIO17", "ok")
        consolidate = len(trips) - recall - append
        await memory.prune_if_due(30.0)  # not due: no trip
        prune = len(trips) - recall - append - consolidate
        history = await memory.load_history("phone")
        facts = await memory.list(category="core")
    assert (recall, append, consolidate, prune) == (1, 1, 1, 0)
    assert [m.content for m in history] == ["is the porch light on", "yes"]
    assert [f.content for f in facts] == ["the porch light is on GPIO17"]


async def test_a_failed_one_trip_write_rolls_back_whole(tmp_path: Path) -> None:
    async with SqliteMemory.open(tmp_path / "m.db", load_vectors=False) as memory:
        await memory.append_history("phone", [ChatMessage.user("first")])
        async with memory._read("test") as conn:  # the UPDATE of the count, after the INSERT
            await conn.execute(
                "CREATE TRIGGER refuse BEFORE UPDATE ON sessions BEGIN "
                "SELECT RAISE(ABORT, 'refused by the test'); END"
            )
        with pytest.raises(MemoryStoreError, match=r"append history failed.*refused by the test"):
            await memory.append_history("phone", [ChatMessage.user("second")])
        history = await memory.load_history("phone")
    assert [m.content for m in history] == ["first"], "the inserted message was rolled back"


async def test_keyword_recall_ranks_only_the_newest_matches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_module, "FTS_CANDIDATES", 4)
    async with SqliteMemory.open(tmp_path / "m.db", load_vectors=False) as memory:
        # The oldest entry matches best (every word, twice); four newer ones match one word.
        await memory.store(MemoryEntry("old", "porch light porch light timer", "daily"))
        for i in range(4):
            await memory.store(MemoryEntry(f"new{i}", f"porch note {i}", "daily"))
        bounded = await memory.recall("porch light timer", limit=5)
        monkeypatch.setattr(sqlite_module, "FTS_CANDIDATES", 100)
        unbounded = await memory.recall("porch light timer", limit=5)
    assert "old" not in {e.key for e in bounded}, "only the 4 newest matches were ranked"
    assert len(bounded) == 4
    assert unbounded[0].key == "old", "within the bound, BM25 still ranks the best first"

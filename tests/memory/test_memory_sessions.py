"""Session history: the tail that is used, retention, unserialisable and busy saves (issue 14)."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import pytest

from clawseed_edge.api import ChatMessage, MemoryStoreError, ToolCall
from clawseed_edge.memory.config import MemoryConfig
from clawseed_edge.memory.none import NoneMemory
from clawseed_edge.memory.sqlite import SqliteMemory


def turn(i: int) -> list[ChatMessage]:
    return [ChatMessage.user(f"question {i}"), ChatMessage.assistant(f"answer {i}")]


async def test_load_history_limit_returns_the_newest_messages_in_order(
    memory: SqliteMemory,
) -> None:
    for i in range(10):
        await memory.append_history("s", turn(i))
    await memory.append_history("other", turn(99))
    tail = await memory.load_history("s", limit=3)
    assert [m.content for m in tail] == ["answer 8", "question 9", "answer 9"]
    assert len(await memory.load_history("s")) == 20  # no limit: everything, as before
    assert len(await memory.load_history("s", limit=1000)) == 20
    assert await memory.load_history("s", limit=0) == []
    assert await NoneMemory("off").load_history("s", limit=3) == []


async def test_load_history_refuses_a_negative_limit(memory: SqliteMemory) -> None:
    with pytest.raises(ValueError, match="limit"):
        await memory.load_history("s", limit=-1)


async def test_load_history_limit_reads_only_the_tail(memory: SqliteMemory) -> None:
    # The tail is read through the (session_id, id) index backwards: the rows visited do not
    # grow with the stored history. Counted in SQLite VM steps, not time.
    await memory.append_history("s", [m for i in range(3000) for m in turn(i)])
    steps = [0]

    def count() -> int:
        steps[0] += 1
        return 0

    conn = memory._conn
    await conn.set_progress_handler(count, 10)
    try:
        tail = await memory.load_history("s", limit=50)
    finally:
        await conn.set_progress_handler(None, 10)
    assert len(tail) == 50 and tail[-1].content == "answer 2999"
    assert steps[0] < 200, steps[0]


async def test_prune_drops_session_messages_past_retention(memory: SqliteMemory) -> None:
    await memory.append_history("old", turn(1))
    await memory.append_history("mixed", turn(2))
    ancient = time.time() - 40 * 86400
    async with memory._write("age the rows") as conn:
        await conn.execute(
            "UPDATE session_messages SET created_at=? WHERE session_id='old'", (ancient,)
        )
        await conn.execute(
            "UPDATE session_messages SET created_at=? WHERE id=(SELECT MIN(id) FROM "
            "session_messages WHERE session_id='mixed')",
            (ancient,),
        )
    await memory.prune(30)
    assert await memory.load_history("old") == []
    assert await memory.session_info("old") is None  # nothing left: the session goes too
    assert [m.content for m in await memory.load_history("mixed")] == ["answer 2"]
    info = await memory.session_info("mixed")
    assert info is not None and info.message_count == 1


async def test_deeply_nested_arguments_are_saved_in_a_safe_form(memory: SqliteMemory) -> None:
    nested: object = "leaf"
    for _ in range(10_000):
        nested = {"a": nested}
    call = ToolCall("relay_set", {"on": True, "deep": nested}, "c1")
    messages = [
        ChatMessage.user("switch it"),
        ChatMessage.assistant("", (call,)),
        ChatMessage.tool("c1", "ok", name="relay_set"),
        ChatMessage.assistant("Done."),
    ]
    await memory.append_history("s", messages)
    loaded = await memory.load_history("s")
    assert [m.role for m in loaded] == ["user", "assistant", "tool", "assistant"]
    (saved,) = loaded[1].tool_calls
    assert (saved.name, saved.id) == ("relay_set", "c1")
    assert "could not be stored" in str(saved.arguments.get("_note", ""))
    assert len(str(saved.arguments)) < 5000  # bounded, not the 10,000-deep original


async def _hold_write_lock(db: Path, seconds: float) -> asyncio.subprocess.Process:
    """Another process that takes the write lock, says ``locked``, holds it for ``seconds``."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        "import sqlite3, sys, time; c = sqlite3.connect(sys.argv[1], isolation_level=None); "
        "c.execute('BEGIN IMMEDIATE'); print('locked', flush=True); "
        "time.sleep(float(sys.argv[2])); c.execute('COMMIT')",
        str(db),
        str(seconds),
        stdout=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None
    assert await proc.stdout.readline() == b"locked\n"
    return proc


async def test_busy_database_fails_visibly_with_what_to_do(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    async with SqliteMemory.open(db, load_vectors=False, busy_timeout_s=0.3) as memory:
        holder = await _hold_write_lock(db, 30)
        try:
            with pytest.raises(MemoryStoreError) as caught:
                await memory.append_history("s", turn(1))
        finally:
            holder.kill()
            await holder.wait()
        message = str(caught.value)
        assert str(db) in message and "another" in message and "0.3 s" in message
        assert "append history" in message and "try again" in message
        await memory.append_history("s", turn(2))  # works once the other writer is gone
        assert [m.content for m in await memory.load_history("s")] == ["question 2", "answer 2"]


async def test_busy_database_is_waited_for(tmp_path: Path) -> None:
    # The other writer commits while we wait: nothing fails, nothing is dropped.
    db = tmp_path / "m.db"
    async with SqliteMemory.open(db, load_vectors=False, busy_timeout_s=30) as memory:
        holder = await _hold_write_lock(db, 0.3)
        await memory.append_history("s", turn(1))
        await holder.wait()
        assert len(await memory.load_history("s")) == 2


def test_busy_timeout_is_validated() -> None:
    with pytest.raises(ValueError, match="busy_timeout_s"):
        MemoryConfig(busy_timeout_s=0)
    with pytest.raises(ValueError, match="busy_timeout_s"):
        MemoryConfig(busy_timeout_s=float("inf"))


async def test_a_lone_surrogate_does_not_lose_the_turn(memory: SqliteMemory) -> None:
    # text from a broken terminal paste: not encodable as UTF-8, still stored and read back
    messages = [ChatMessage.user("bad \ud800 paste"), ChatMessage.assistant("ok")]
    await memory.append_history("s", messages)
    assert await memory.load_history("s") == messages

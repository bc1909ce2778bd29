"""open_memory, MemoryConfig and the NoneMemory fallback."""

from __future__ import annotations

import logging
from pathlib import Path

import msgspec
import pytest

from clawseed_edge.api import Memory, MemoryEntry, MemoryUnavailable, SessionStore
from clawseed_edge.memory.config import MemoryConfig
from clawseed_edge.memory.factory import open_memory, resolve_path
from clawseed_edge.memory.none import NoneMemory
from clawseed_edge.memory.sqlite import SqliteMemory


async def test_open_memory_opens_sqlite_under_home(tmp_path: Path) -> None:
    mem = await open_memory(MemoryConfig(), tmp_path)
    try:
        assert isinstance(mem, SqliteMemory)
        await mem.store(MemoryEntry("k", "v"))
    finally:
        await mem.aclose()
    assert (tmp_path / "memory.db").exists()


async def test_parent_is_a_file_gives_none_memory(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "blocker").write_text("not a directory")
    config = MemoryConfig(path=str(tmp_path / "blocker" / "memory.db"))
    with caplog.at_level(logging.ERROR):
        mem = await open_memory(config, tmp_path)
    assert isinstance(mem, NoneMemory)
    assert "blocker" in mem.reason
    assert "running without memory" in caplog.text


async def test_corrupt_file_gives_none_memory_and_is_left_alone(tmp_path: Path) -> None:
    garbage = b"this is not a database " * 200
    (tmp_path / "memory.db").write_bytes(garbage)
    mem = await open_memory(MemoryConfig(), tmp_path)
    assert isinstance(mem, NoneMemory)
    assert "not a database" in mem.reason
    assert (tmp_path / "memory.db").read_bytes() == garbage


async def test_none_memory_reads_empty_and_writes_say_why() -> None:
    mem = NoneMemory("disk full")
    assert isinstance(mem, Memory) and isinstance(mem, SessionStore)
    assert await mem.recall("x") == [] and await mem.list() == []
    assert await mem.get("x") is None and await mem.count() == 0
    assert not await mem.health_check()
    assert await mem.load_history("s") == []
    with pytest.raises(MemoryUnavailable, match="memory is unavailable: disk full"):
        await mem.store(MemoryEntry("k", "v"))
    with pytest.raises(MemoryUnavailable, match="disk full"):
        await mem.forget("k")
    await mem.aclose()


async def test_backend_none(tmp_path: Path) -> None:
    mem = await open_memory(MemoryConfig(backend="none"), tmp_path)
    assert isinstance(mem, NoneMemory) and "backend = none" in mem.reason


def test_config_decodes_from_toml_and_refuses_unknown_keys() -> None:
    config = msgspec.toml.decode(
        b'mode = "keyword"\nretention_days = 7\npath = "/data/m.db"', type=MemoryConfig
    )
    assert config.mode == "keyword" and config.retention_days == 7
    assert resolve_path(config, Path("/home")) == Path("/data/m.db")
    assert resolve_path(MemoryConfig(), Path("/home")) == Path("/home/memory.db")
    with pytest.raises(msgspec.ValidationError, match="retension_days"):
        msgspec.toml.decode(b"retension_days = 7", type=MemoryConfig)
    with pytest.raises(msgspec.ValidationError, match="vector_weight"):
        msgspec.toml.decode(b"vector_weight = 3.0", type=MemoryConfig)


def test_public_names_and_lazy_imports() -> None:
    import subprocess
    import sys

    import clawseed_edge.memory as memory

    assert set(memory.__all__) == {"MemoryConfig", "NoneMemory", "SqliteMemory", "open_memory"}
    code = (
        "import sys, clawseed_edge.memory; "
        "print(sorted(m for m in ('aiosqlite', 'sqlite_vec', 'sqlean') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"

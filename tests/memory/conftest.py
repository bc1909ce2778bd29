from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from memory_fakes import FakeEmbedder

from clawseed_edge.memory.sqlite import SqliteMemory


@pytest.fixture
def embedder() -> FakeEmbedder:
    return FakeEmbedder()


@pytest.fixture
async def memory(tmp_path: Path, embedder: FakeEmbedder) -> AsyncIterator[SqliteMemory]:
    async with SqliteMemory.open(tmp_path / "memory.db", embedder=embedder) as mem:
        yield mem

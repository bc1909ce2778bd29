"""Memory test fixtures, and a deterministic fake embedder (no network, no model).

Each non-stop word is mapped through a small synonym table to a canonical word, then hashed to
three signed positions of a 384-dimension vector; the sum is L2-normalised. Texts sharing
canonical words are close; unrelated texts are nearly orthogonal. Because the synonym table
applies only here, a paraphrase ("ventilator switch" for "fan relay") is found by the vector
side while FTS5 sees no shared word.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest

from clawseed_edge.memory.sqlite import SqliteMemory

SYNONYMS = {
    "ventilator": "fan",
    "blower": "fan",
    "switch": "relay",
    "contactor": "relay",
    "hothouse": "greenhouse",
    "glasshouse": "greenhouse",
}
STOP = {"the", "a", "an", "is", "on", "to", "of", "which", "what", "and", "in", "it", "its"}


class FakeEmbedder:
    """Implements api ``EmbeddingProvider``; counts calls and can be told to fail."""

    def __init__(self, dimensions: int = 384) -> None:
        self.dimensions = dimensions
        self.calls = 0
        self.texts: list[str] = []
        self.fail = False

    @property
    def embedding_dimensions(self) -> int | None:
        return self.dimensions

    def vector(self, text: str) -> list[float]:
        out = [0.0] * self.dimensions
        for word in re.findall(r"\w+", text.lower()):
            if word in STOP:
                continue
            word = SYNONYMS.get(word, word)
            digest = hashlib.sha256(word.encode()).digest()
            for i in range(3):
                index = int.from_bytes(digest[i * 4 : i * 4 + 3], "big") % self.dimensions
                out[index] += 1.0 if digest[12 + i] & 1 else -1.0
        norm = math.sqrt(sum(x * x for x in out)) or 1.0
        return [x / norm for x in out]

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        self.texts.extend(texts)
        if self.fail:
            raise ConnectionError("fake embedder is down")
        return [self.vector(t) for t in texts]


@pytest.fixture
def make_embedder() -> type[FakeEmbedder]:
    """The FakeEmbedder class, to build extra embedders in a test."""
    return FakeEmbedder


@pytest.fixture
def embedder() -> FakeEmbedder:
    return FakeEmbedder()


@pytest.fixture
async def memory(tmp_path: Path, embedder: FakeEmbedder) -> AsyncIterator[SqliteMemory]:
    async with SqliteMemory.open(tmp_path / "memory.db", embedder=embedder) as mem:
        yield mem

"""MemoryConfig: the ``[memory]`` table of the configuration file."""

from __future__ import annotations

from typing import Literal

import msgspec

__all__ = ["MemoryConfig"]


class MemoryConfig(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """Settings of the memory store.

    Attributes:
        backend: ``sqlite``, or ``none`` to run without memory.
        path: The database file; relative paths are under ``$CLAWSEED_HOME``.
        mode: Recall mode: ``hybrid``, ``keyword`` or ``vector`` (keyword without embeddings).
        vector_weight: Weight of vector similarity in hybrid recall.
        keyword_weight: Weight of BM25 keyword relevance in hybrid recall.
        min_relevance: Recall results scoring below this (0..1) are dropped.
        embedding_dimensions: Vector length, if known before the first embedding.
        retention_days: ``conversation`` and ``daily`` entries older than this are pruned.
        conflict_threshold: Word-overlap (Jaccard, 0..1) at which a new ``core`` fact
            supersedes an older one (a fact extracted from a turn never supersedes a key
            stored on purpose).
        snapshot: Keep ``MEMORY_SNAPSHOT.md`` (core memory) next to the database, and rebuild
            a missing database from it.
        synchronous: ``FULL`` (survives power cuts) or ``NORMAL`` (faster, may lose the last
            writes on a power cut).
        busy_timeout_s: Seconds a write waits for another process's write lock before it
            fails visibly (0 < value <= 600).
    """

    backend: Literal["sqlite", "none"] = "sqlite"
    path: str = "memory.db"
    mode: Literal["hybrid", "keyword", "vector"] = "hybrid"
    vector_weight: float = 0.7
    keyword_weight: float = 0.3
    min_relevance: float = 0.15
    embedding_dimensions: int | None = None
    retention_days: float = 30.0
    conflict_threshold: float = 0.6
    snapshot: bool = True
    synchronous: Literal["FULL", "NORMAL"] = "FULL"
    busy_timeout_s: float = 5.0

    def __post_init__(self) -> None:
        for name in ("vector_weight", "keyword_weight", "min_relevance", "conflict_threshold"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"memory.{name} = {value} is outside 0..1")
        if self.vector_weight + self.keyword_weight <= 0.0:
            raise ValueError("memory.vector_weight and memory.keyword_weight are both 0")
        if self.retention_days <= 0:
            raise ValueError(f"memory.retention_days = {self.retention_days} must be positive")
        if not 0 < self.busy_timeout_s <= 600:  # also refuses NaN
            raise ValueError(
                f"memory.busy_timeout_s = {self.busy_timeout_s} must be in (0, 600] seconds"
            )
        if self.embedding_dimensions is not None and self.embedding_dimensions <= 0:
            raise ValueError(
                f"memory.embedding_dimensions = {self.embedding_dimensions} must be positive"
            )

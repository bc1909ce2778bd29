"""open_memory: build the configured store, or a NoneMemory that says why there is none."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from clawseed_edge.api import EmbeddingProvider, MemoryStoreError, Redactor

from .config import MemoryConfig
from .none import NoneMemory
from .snapshot import SNAPSHOT_NAME
from .sqlite import SqliteMemory

__all__ = ["open_memory", "resolve_path"]

log = logging.getLogger(__name__)


def resolve_path(config: MemoryConfig, home: Path) -> Path:
    """The database path: ``config.path``, relative paths taken under ``home``."""
    path = Path(config.path).expanduser()
    return path if path.is_absolute() else home / path


async def open_memory(
    config: MemoryConfig,
    home: Path,
    embedder: EmbeddingProvider | None = None,
    *,
    redactor: Redactor | None = None,
) -> SqliteMemory | NoneMemory:
    """Open the memory the config asks for; never raises for an unopenable database.

    When the database cannot be opened (read-only or full disk, corrupt file, missing
    directory) the reason is logged and a :class:`NoneMemory` carrying it is returned, so the
    agent keeps working without memory. The file is left as it was. The caller owns the
    result and must ``await memory.aclose()``.
    """
    if config.backend == "none":
        return NoneMemory("memory is disabled in the configuration ([memory] backend = none)")
    path = resolve_path(config, home)
    options: dict[str, Any] = {
        "embedder": embedder,
        # sqlite-vec (and, where the standard sqlite3 cannot load it, sqlean's own libsqlite)
        # only for a store that will write vectors: without an embedder none is ever written.
        "load_vectors": embedder is not None,
        "vector_weight": config.vector_weight,
        "keyword_weight": config.keyword_weight,
        "min_relevance": config.min_relevance,
        "mode": config.mode,
        "embedding_dimensions": config.embedding_dimensions,
        "conflict_threshold": config.conflict_threshold,
        "synchronous": config.synchronous,
        "busy_timeout_s": config.busy_timeout_s,
        "redactor": redactor,
        "snapshot_path": path.parent / SNAPSHOT_NAME if config.snapshot else None,
    }
    try:
        return await SqliteMemory.open(path, **options)
    except (MemoryStoreError, OSError) as exc:
        reason = f"cannot open {path}: {exc}"
        log.error("memory: %s; running without memory (check the disk and the file)", reason)
        return NoneMemory(reason)

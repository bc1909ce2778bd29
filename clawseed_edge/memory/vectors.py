"""The vector half of SqliteMemory: the vec0 table, embeddings and their cache.

Vectors live in a sqlite-vec ``vec0`` table (``entries_vec``: rowid = entry id, the namespace
as partition key, cosine distance), created once the dimension is known (from the config, the
embedder, or its first answer) and recorded in ``memory_meta``. Embeddings are cached by
content hash in ``embedding_cache``, so storing the same text again does not call the
embedder. Any embedder failure degrades to "no vector" (logged), never to a lost write.
"""

from __future__ import annotations

import logging
import time
from array import array
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any

from clawseed_edge.api import EmbeddingProvider

__all__ = ["STALE_KEY", "VectorMethods"]

#: ``memory_meta`` key: when a store without sqlite-vec first updated entries that may have a
#: vector (Unix seconds).
STALE_KEY = "vectors_stale_since"

log = logging.getLogger("clawseed_edge.memory.sqlite")


class VectorMethods:
    """Vector table, embedding and backfill methods for SqliteMemory."""

    if TYPE_CHECKING:
        embedder: EmbeddingProvider | None
        vectors_loaded: bool
        vector_reason: str
        _conn: Any
        _dims: int | None
        _vec_table: bool
        _vec_unmaintained: bool

        def _read(self, what: str) -> AbstractAsyncContextManager[Any]: ...

        def _write(self, what: str) -> AbstractAsyncContextManager[Any]: ...

    @property
    def vector_enabled(self) -> bool:
        """Whether vectors are being stored (sqlite-vec loaded and an embedder configured)."""
        return self.vectors_loaded and self.embedder is not None

    async def _init_vectors(self) -> None:
        rows = await self._conn.execute_fetchall(
            "SELECT value FROM memory_meta WHERE key = 'vector_dimensions'"
        )
        stored = int(rows[0][0]) if rows else None
        wanted = self._dims
        if wanted is None and self.embedder is not None:
            wanted = getattr(self.embedder, "embedding_dimensions", None)
        # The table exists and this store cannot maintain it: its writes mark what they change.
        self._vec_unmaintained = stored is not None and not self.vectors_loaded
        if stored is not None and wanted is not None and stored != wanted:
            log.error(
                "memory: the database holds %d-dimension vectors but the embedder gives %d; "
                "recall is keyword-only (use the old embedding model or a new memory.db)",
                stored,
                wanted,
            )
            self.vectors_loaded, self.vector_reason = False, "embedding dimension changed"
            self._vec_unmaintained = True
            return
        self._dims = stored or wanted
        if stored is not None and self.vectors_loaded:
            self._vec_table = True
            await self._drop_stale_vectors(stored)
        elif self._dims is not None and self.vector_enabled:
            await self._create_vec_table(self._dims)

    async def _drop_stale_vectors(self, dims: int) -> None:
        """Delete the vectors written before a store without sqlite-vec changed their entries
        (see the module doc). Each statement is idempotent; the mark goes last."""
        await self._conn.execute(
            "DELETE FROM entries_vec WHERE rowid NOT IN (SELECT id FROM entries)"
        )
        rows = await self._conn.execute_fetchall(
            "SELECT value FROM memory_meta WHERE key = ?", (STALE_KEY,)
        )
        if not rows:
            return
        # Updated since the mark, or holding text that was never embedded (an import keeps
        # its own updated_at): every vector written is in the cache under its text's hash.
        await self._conn.execute(
            "DELETE FROM entries_vec WHERE rowid IN (SELECT id FROM entries WHERE updated_at >= ? "
            "OR content_hash NOT IN (SELECT content_hash FROM embedding_cache "
            "WHERE dimensions = ?))",
            (float(rows[0][0]), dims),
        )
        await self._conn.execute("DELETE FROM memory_meta WHERE key = ?", (STALE_KEY,))
        log.info("memory: vectors of entries changed while sqlite-vec was not loaded deleted")

    async def _create_vec_table(self, dims: int) -> None:
        await self._conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS entries_vec USING vec0("
            f"namespace TEXT PARTITION KEY, embedding float[{int(dims)}] distance_metric=cosine)"
        )
        await self._conn.execute(
            "INSERT OR REPLACE INTO memory_meta (key, value) VALUES ('vector_dimensions', ?)",
            (str(dims),),
        )
        self._dims, self._vec_table = dims, True

    async def _embed(self, text: str, digest: str | None) -> bytes | None:
        """The float32 vector blob of ``text`` (cached by ``digest`` if given), or None."""
        return (await self._embed_many([text], [digest]))[0]

    async def _embed_many(
        self, texts: Sequence[str], digests: Sequence[str | None], *, batch: int = 64
    ) -> list[bytes | None]:
        """Vector blobs for ``texts``: cached ones from the cache, the rest from the embedder.

        A failing embedder or a wrong-length vector gives None for that text (logged): the
        caller stores without a vector or answers keyword-only.
        """
        out: list[bytes | None] = [None] * len(texts)
        if not self.vector_enabled or self.embedder is None or not texts:
            return out
        missing = list(range(len(texts)))
        if self._dims is not None:
            wanted = sorted({d for d in digests if d is not None})
            cached: dict[str, bytes] = {}
            async with self._read("embedding cache lookup") as conn:
                for start in range(0, len(wanted), 500):
                    hashes = wanted[start : start + 500]
                    rows = await conn.execute_fetchall(
                        "SELECT content_hash, vector FROM embedding_cache WHERE dimensions=? "
                        f"AND content_hash IN ({','.join('?' * len(hashes))})",
                        (self._dims, *hashes),
                    )
                    cached.update((r[0], bytes(r[1])) for r in rows)
            for i, digest in enumerate(digests):
                if digest is not None and digest in cached:
                    out[i] = cached[digest]
            missing = [i for i in missing if out[i] is None]
        for start in range(0, len(missing), batch):
            chunk = missing[start : start + batch]
            try:
                vectors = await self.embedder.embed([texts[i] for i in chunk])
                floats = [[float(x) for x in v] for v in vectors]
                if len(floats) != len(chunk):
                    raise ValueError(f"{len(floats)} vectors for {len(chunk)} texts")
            except Exception as exc:  # any provider failure: degrade, never lose the write
                log.warning("memory: embedding failed, continuing without vectors: %s", exc)
                continue
            if self._dims is None:
                async with self._write("create vector table"):
                    await self._create_vec_table(len(floats[0]))
            for i, vector in zip(chunk, floats, strict=True):
                if len(vector) != self._dims:
                    log.warning(
                        "memory: the embedder returned %d dimensions, expected %d; no vector",
                        len(vector),
                        self._dims,
                    )
                    continue
                out[i] = array("f", vector).tobytes()
        return out

    async def backfill_vectors(self, *, batch: int = 64) -> int:
        """Embed entries stored without a vector (embedder was down, or vectors were off).

        Pages through them ``batch`` at a time (never all rows at once) and stops at the first
        batch the embedder cannot embed, so a server that is down costs one warning, not one
        per batch; the rest wait for the next call. Returns how many entries got a vector; 0
        when vectors are unavailable. Safe to cancel: each batch is its own transaction.
        """
        if not self.vector_enabled:
            return 0
        if not self._vec_table:
            await self._embed("probe", None)  # learns the dimension, creates the table
            if not self._vec_table:
                return 0
        done = 0
        after = 0
        while True:
            async with self._read("backfill vectors") as conn:
                chunk = await conn.execute_fetchall(
                    # A rowid lookup per entry: `NOT IN (SELECT rowid ...)` would rebuild the
                    # whole set of vector rowids for every page (0.8 s against 0.04 s for 157
                    # pages over 20,000 entries, half of them with a vector).
                    "SELECT id, namespace, content, content_hash FROM entries e "
                    "WHERE id > ? AND NOT EXISTS "
                    "(SELECT 1 FROM entries_vec v WHERE v.rowid = e.id) "
                    "ORDER BY id LIMIT ?",
                    (after, batch),
                )
            if not chunk:
                return done
            after = int(chunk[-1][0])
            blobs = await self._embed_many([r[2] for r in chunk], [r[3] for r in chunk])
            found = [(r, b) for r, b in zip(chunk, blobs, strict=True) if b is not None]
            if not found:
                return done  # the embedder failed (logged): the rest wait for the next call
            now = time.time()
            async with self._write("backfill vectors") as conn:
                await conn.executemany(
                    "INSERT INTO entries_vec (rowid, namespace, embedding) VALUES (?,?,?)",
                    [(r[0], r[1], b) for r, b in found],
                )
                await conn.executemany(
                    "INSERT OR IGNORE INTO embedding_cache VALUES (?,?,?,?)",
                    [(r[3], self._dims, b, now) for r, b in found],
                )
            done += len(found)

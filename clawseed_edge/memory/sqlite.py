"""SqliteMemory: entries, hybrid recall, sessions, hygiene and snapshots in one SQLite file.

One aiosqlite connection (one worker thread) in WAL mode. Every write is one transaction
(``BEGIN IMMEDIATE ... COMMIT``), so a crash or a cancelled caller leaves either the old or
the new state, never half of one.

Durability: ``synchronous=FULL`` by default. In WAL mode, NORMAL already survives a process
crash (SIGKILL, OOM) without losing a committed write, but on a power cut it may lose the last
commits, because the WAL is only fsynced at checkpoints. A Pi loses power often, and memory
writes are rare (a few per turn), so we pay one fsync per commit to make a returned ``store()``
durable across power cuts. Pass ``synchronous="NORMAL"`` for write-heavy use on a UPS.

Sizes (page cache, WAL) and the busy wait are set by :mod:`.connect`; see docs/memory.md.
"""

from __future__ import annotations

import asyncio
import builtins
import dataclasses
import functools
import logging
import time
from collections.abc import AsyncIterator, Callable, Generator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal, TypeVar

from clawseed_edge.api import EmbeddingProvider, MemoryEntry, MemoryStoreError, Redactor

from . import hygiene
from .connect import (
    CACHE_SIZE_KIB,
    JOURNAL_SIZE_LIMIT,
    MAX_BUSY_TIMEOUT_S,
    WAL_AUTOCHECKPOINT_PAGES,
    begin_write,
    configure,
    driver_errors,
    open_connection,
    run_in_worker,
    translate_error,
    write_transaction,
)
from .entries import MAX_ENTRY_CHARS, check_entries, entry_from_row, filters_sql, upsert_row
from .hygiene import HygieneMethods, conflict_search_words
from .recall import fts_match_expression, keyword_scores, merge_scores, vector_scores
from .schema import migrate
from .sessions import SessionMethods
from .snapshot import SnapshotMethods
from .vectors import STALE_KEY, VectorMethods

__all__ = [
    "CACHE_SIZE_KIB",
    "JOURNAL_SIZE_LIMIT",
    "MAX_ENTRY_CHARS",
    "WAL_AUTOCHECKPOINT_PAGES",
    "RecallMode",
    "SqliteMemory",
]

log = logging.getLogger(__name__)

RecallMode = Literal["hybrid", "keyword", "vector"]
T = TypeVar("T")

_COLUMNS = (
    "id, key, content, category, namespace, session_id, importance, created_at, updated_at, "
    "metadata"
)
_E_COLUMNS = ", ".join("e." + c.strip() for c in _COLUMNS.split(","))
_NOT_SUPERSEDED = "json_extract(e.metadata, '$.superseded_by') IS NULL"
_KNN_MAX = 4096  # sqlite-vec's upper bound on k
#: Keyword recall ranks (BM25) only the newest this many entries that match the words, so its
#: cost is bounded however many match: 100k entries that all match took 0.38 CPU-s to rank.
#: An older entry that matches better is missed only when more than this many newer ones
#: match too (see docs/memory.md).
FTS_CANDIDATES = 2000

# The conflict check's candidates. CROSS JOIN pins the FTS table as the outer loop: with a
# plain JOIN the planner walked every core row through the entries_category index and ran
# the MATCH once per row, so each store cost O(core rows) FTS searches (35 ms per store at 300
# facts; 0.2 ms driven from the FTS table). Best BM25 first, so LIMIT keeps the closest; the
# MATCH holds only the words a conflicting fact must contain (hygiene.conflict_search_words).
_CONFLICT_CANDIDATES = (
    "SELECT e.id, e.content, e.key, e.updated_at, json_extract(e.metadata, '$.source') "
    "FROM entries_fts CROSS JOIN entries e ON "
    "e.id = entries_fts.rowid WHERE entries_fts MATCH ? AND e.namespace=? AND "
    f"e.category='core' AND e.id != ? AND {_NOT_SUPERSEDED} ORDER BY entries_fts.rank LIMIT 50"
)
_UPSERT = (
    "INSERT INTO entries (namespace, key, content, category, session_id, importance, "
    "created_at, updated_at, metadata, content_hash) VALUES (?,?,?,?,?,?,?,?,?,?) "
    "ON CONFLICT (namespace, key) DO UPDATE SET content=excluded.content, "
    "category=excluded.category, session_id=excluded.session_id, "
    "importance=excluded.importance, created_at=CASE WHEN ? THEN excluded.created_at "
    "ELSE entries.created_at END, updated_at=excluded.updated_at, "
    "metadata=excluded.metadata, content_hash=excluded.content_hash"
)


class SqliteMemory(VectorMethods, SessionMethods, HygieneMethods, SnapshotMethods):
    """The SQLite memory store (implements api ``Memory`` and ``SessionStore``).

    Use ``async with SqliteMemory.open(path, ...) as mem:`` or ``mem = await
    SqliteMemory.open(path)`` and later ``await mem.aclose()`` (idempotent). A closed store
    refuses every call with :class:`MemoryStoreError`.

    Args:
        path: The database file; its directory must exist.
        embedder: Any object with ``async embed(texts)``; None means keyword-only recall.
        vector_weight: Weight of the vector side in hybrid recall.
        keyword_weight: Weight of the keyword side in hybrid recall.
        min_relevance: Merged scores below this are not returned (0..1).
        mode: ``hybrid``, ``keyword`` or ``vector``; falls back to ``keyword`` without an
            embedder or without sqlite-vec.
        embedding_dimensions: The vector length if known before the first embedding.
        conflict_threshold: Jaccard word overlap at which two ``core`` entries conflict.
        synchronous: ``FULL`` (default, power-cut durable) or ``NORMAL`` (see module doc).
        snapshot_path: ``MEMORY_SNAPSHOT.md`` to hydrate a new database from, and the default
            target of :meth:`export_snapshot`.
        load_vectors: Load sqlite-vec (and sqlean where the standard ``sqlite3`` cannot
            load it). Default: only when an ``embedder`` is given; without one no vector is
            ever written, so the store stays on the standard ``sqlite3``, keyword-only.
        busy_timeout_s: How long a write waits for another process's write lock (the
            service and a CLI command writing at once) before it fails with a
            MemoryStoreError that says so; nothing is dropped silently.

    Errors: every database failure is raised as :class:`MemoryStoreError` naming the
    operation. Every public coroutine is safe to cancel: a cancelled write is rolled back.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        embedder: EmbeddingProvider | None = None,
        vector_weight: float = 0.7,
        keyword_weight: float = 0.3,
        min_relevance: float = 0.15,
        mode: RecallMode = "hybrid",
        embedding_dimensions: int | None = None,
        conflict_threshold: float = 0.6,
        synchronous: Literal["FULL", "NORMAL"] = "FULL",
        snapshot_path: str | Path | None = None,
        load_vectors: bool | None = None,
        busy_timeout_s: float = 5.0,
        redactor: Redactor | None = None,
    ) -> None:
        if mode not in ("hybrid", "keyword", "vector"):
            raise ValueError(f"memory mode {mode!r} is not one of hybrid, keyword, vector")
        if synchronous not in ("FULL", "NORMAL"):
            raise ValueError(f"synchronous {synchronous!r} is not FULL or NORMAL")
        self.path = Path(path) if str(path) != ":memory:" else path
        self.embedder = embedder
        self.vector_weight = vector_weight
        self.keyword_weight = keyword_weight
        self.min_relevance = min_relevance
        self.mode: RecallMode = mode
        self.conflict_threshold = conflict_threshold
        self.snapshot_path = Path(snapshot_path) if snapshot_path else None
        if not 0 < busy_timeout_s <= MAX_BUSY_TIMEOUT_S:
            raise ValueError(
                f"busy_timeout_s = {busy_timeout_s} must be in (0, {MAX_BUSY_TIMEOUT_S:g}] s"
            )
        self._synchronous = synchronous
        self.busy_timeout_s = busy_timeout_s
        self._load_vectors = embedder is not None if load_vectors is None else load_vectors
        # Nothing written to disk may hold a configured secret: entries and history pass it.
        self.redactor = redactor
        self._dims = embedding_dimensions
        self._conn: Any = None
        self._state: Literal["unopened", "open", "closed"] = "unopened"
        self._lock = asyncio.Lock()
        self.vectors_loaded = False
        self.vector_reason = ""
        self.driver = ""  # sqlite3 or sqlean, once open
        self._vec_table = False
        self._vec_unmaintained = False  # see vectors.py: stale vectors are marked
        self._core_changed = False
        self._last_prune: float | None = None  # epoch s; read once by prune_if_due

    # --- lifecycle -----------------------------------------------------------------------

    @classmethod
    def open(cls, path: str | Path, **options: Any) -> _Opening:
        """Open (create, migrate, maybe hydrate) a store: awaitable and ``async with``-able."""
        return _Opening(cls(path, **options))

    async def connect(self) -> SqliteMemory:
        """Open the database; called by :meth:`open`.

        Raises:
            MemoryStoreError: The file cannot be opened or is not a database.
        """
        if self._state != "unopened":
            raise MemoryStoreError(f"memory store {self.path} was already {self._state}")
        fresh = self.path == ":memory:" or not await asyncio.to_thread(Path(self.path).exists)
        opened = await open_connection(self.path, load_vectors=self._load_vectors)
        self._conn = opened.conn
        self.vectors_loaded, self.vector_reason = opened.vectors, opened.reason
        if self.embedder is None and not self._load_vectors:
            self.vector_reason = "no embedding provider configured ([embedding])"
        self.driver = opened.driver
        try:
            await configure(self._conn, self._synchronous, self.busy_timeout_s)
            await migrate(self._conn)
            await self._init_vectors()
        except driver_errors() as exc:
            await self._conn.close()
            self._state = "closed"
            raise MemoryStoreError(
                f"cannot open memory database {str(self.path)!r}: {exc}"
            ) from exc
        self._state = "open"
        snapshot = self.snapshot_path
        if fresh and snapshot is not None and await asyncio.to_thread(snapshot.exists):
            try:
                count = await self.hydrate_snapshot(snapshot)
            except MemoryStoreError as exc:
                log.error("memory: could not hydrate from the snapshot, starting empty: %s", exc)
            else:
                log.info("memory: hydrated %d core entries from %s", count, snapshot)
        return self

    async def aclose(self) -> None:
        """Write the snapshot if core memory changed (and one is configured), then close the
        connection and stop its thread. Idempotent."""
        if self._state != "open":
            self._state = "closed"
            return
        if self.snapshot_path is not None and self._core_changed:
            try:
                await self.export_snapshot()
            except MemoryStoreError as exc:
                log.error("memory: snapshot not written on close: %s", exc)
        self._state = "closed"
        async with self._lock:
            try:
                # Another process may keep the file open, and then SQLite keeps the WAL.
                await self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except driver_errors() as exc:
                # busy (a reader mid-transaction): the next checkpoint will do it
                log.info("memory: WAL not truncated on close: %s", exc)
            await self._conn.close()

    async def __aenter__(self) -> SqliteMemory:
        if self._state == "unopened":
            await self.connect()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    @property
    def effective_mode(self) -> RecallMode:
        """The mode recall actually uses (``keyword`` when vectors are unavailable)."""
        return self.mode if self.vector_enabled else "keyword"

    # --- plumbing ------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._state != "open":
            raise MemoryStoreError(f"memory store {self.path} is {self._state}; open it first")

    @asynccontextmanager
    async def _read(self, what: str) -> AsyncIterator[Any]:
        self._check_open()
        async with self._lock:
            try:
                yield self._conn
            except driver_errors() as exc:
                raise translate_error(exc, what) from exc

    @asynccontextmanager
    async def _write(self, what: str) -> AsyncIterator[Any]:
        """One write transaction; rolled back on any error or cancellation."""
        self._check_open()
        async with self._lock:
            try:
                await begin_write(self._conn, self.path, what, self.busy_timeout_s)
                yield self._conn
                await self._conn.execute("COMMIT")
            except BaseException as exc:
                try:
                    await self._conn.execute("ROLLBACK")
                except driver_errors():
                    pass  # no transaction was open (BEGIN itself failed)
                if isinstance(exc, driver_errors()):
                    raise translate_error(exc, what) from exc
                raise

    async def _write_once(self, what: str, body: Callable[[Any], T]) -> T:
        """One write transaction run whole on the worker thread: one trip, not one per
        statement. ``body`` gets the driver connection and must not touch the event loop.

        A cancelled caller stops waiting; the transaction still commits or rolls back whole.
        """
        self._check_open()
        run = functools.partial(
            write_transaction,
            body=body,
            path=self.path,
            what=what,
            busy_timeout_s=self.busy_timeout_s,
        )
        async with self._lock:
            try:
                return await run_in_worker(self._conn, run)
            except driver_errors() as exc:
                raise translate_error(exc, what) from exc

    # --- Memory --------------------------------------------------------------------------

    async def store(self, entry: MemoryEntry) -> MemoryEntry:
        """Insert or update by (namespace, key); returns the stored entry with its times.

        One transaction, durable when this returns. Storing a ``core`` entry marks older
        ``core`` entries of the namespace that overlap it (Jaccard >= ``conflict_threshold``)
        as superseded by it. An embedder failure stores the entry without a vector (logged).

        Raises:
            MemoryStoreError: Empty key or namespace, or a database failure.
        """
        return (await self.store_many([entry]))[0]

    async def store_many(self, entries: Sequence[MemoryEntry]) -> builtins.list[MemoryEntry]:
        """Store several entries in ONE transaction (all or none); embeddings are batched.

        The bulk path for imports and hydration: one commit (one fsync) for the lot.

        Raises:
            MemoryStoreError: An entry has an empty key or namespace or more than
                ``MAX_ENTRY_CHARS`` characters of content (nothing is stored), or a database
                failure (nothing is stored).
        """
        check_entries(entries)
        self._check_open()
        if self.redactor is not None:
            scrub = self.redactor.scrub
            entries = [dataclasses.replace(e, content=scrub(e.content)) for e in entries]
        digests = [hygiene.content_hash(e.content) for e in entries]
        blobs = await self._embed_many([e.content for e in entries], digests)
        now = time.time()
        rows = [upsert_row(e, d, now) for e, d in zip(entries, digests, strict=True)]
        with_vectors = self._vec_table and self.vectors_loaded
        mark_stale = self._vec_unmaintained
        dims = self._dims

        def write(conn: Any) -> dict[tuple[str, str], tuple[int, float]]:
            # On the worker thread, the whole transaction in one trip (see _write_once).
            conn.executemany(_UPSERT, rows)
            ids = _ids(conn, entries)
            if mark_stale:
                conn.execute(
                    "INSERT OR IGNORE INTO memory_meta (key, value) VALUES (?, ?)",
                    (STALE_KEY, repr(now)),
                )
            if with_vectors:
                rowids = [ids[(e.namespace, e.key)][0] for e in entries]
                conn.executemany("DELETE FROM entries_vec WHERE rowid=?", [(r,) for r in rowids])
                vectors = {
                    rowid: (rowid, e.namespace, blob)
                    for rowid, e, blob in zip(rowids, entries, blobs, strict=True)
                    if blob is not None
                }  # a key stored twice in one batch keeps its last vector
                conn.executemany(
                    "INSERT INTO entries_vec (rowid, namespace, embedding) VALUES (?,?,?)",
                    list(vectors.values()),
                )
                conn.executemany(
                    "INSERT OR IGNORE INTO embedding_cache VALUES (?,?,?,?)",
                    [
                        (d, dims, blob, now)
                        for d, blob in zip(digests, blobs, strict=True)
                        if blob is not None
                    ],
                )
            for entry, row in zip(entries, rows, strict=True):
                if entry.category == "core":
                    rowid = ids[(entry.namespace, entry.key)][0]
                    self._mark_conflicts(conn, rowid, entry, float(row[7]))
            return ids

        ids = await self._write_once("store", write)
        if any(e.category == "core" for e in entries):
            self._core_changed = True
        return [
            MemoryEntry(
                e.key,
                e.content,
                e.category,
                e.namespace,
                e.session_id,
                float(e.importance),
                ids[(e.namespace, e.key)][1],
                row[7],
                dict(e.metadata),
            )
            for e, row in zip(entries, rows, strict=True)
        ]

    def _mark_conflicts(self, conn: Any, rowid: int, entry: MemoryEntry, updated: float) -> None:
        """Mark the loser of ``entry`` and each overlapping ``core`` entry as superseded (on the
        worker thread, inside the store's transaction).

        A key stored on purpose (the user, ``memory_store``) beats a fact extracted from a
        turn (``consolidation``), whichever is newer; otherwise the older one loses.
        """
        search = conflict_search_words(entry.content, self.conflict_threshold)
        expr = fts_match_expression(" ".join(search))
        if expr is None:
            return
        extracted = entry.metadata.get("source") == hygiene.EXTRACTED
        rows = conn.execute(_CONFLICT_CANDIDATES, (expr, entry.namespace, rowid)).fetchall()
        for other_id, content, key, other_updated, other_source in rows:
            overlap = hygiene.jaccard(entry.content, content)
            if overlap < self.conflict_threshold:
                continue
            if extracted != (other_source == hygiene.EXTRACTED):
                entry_loses = extracted  # explicit keys win
            else:
                entry_loses = other_updated > updated
            older, newer_key = (rowid, key) if entry_loses else (other_id, entry.key)
            log.info("memory: %r supersedes an overlapping fact (overlap %.2f)", newer_key, overlap)
            conn.execute(
                "UPDATE entries SET metadata = json_set(metadata, '$.superseded_by', ?) WHERE id=?",
                (newer_key, older),
            )
            if older == rowid:
                return

    async def recall(
        self,
        query: str,
        *,
        limit: int = 5,
        namespace: str = "default",
        session_id: str | None = None,
        category: str | None = None,
        include_superseded: bool = False,
        mode: RecallMode | None = None,
    ) -> list[MemoryEntry]:
        """The most relevant entries for ``query``, best first, each with ``score`` set.

        Any text is a valid query (FTS5 syntax in it is treated as words). If embedding the
        query fails, this query is answered keyword-only (logged). Superseded ``core``
        entries are left out unless ``include_superseded``.
        """
        self._check_open()
        if limit <= 0:
            return []
        use = mode or self.mode
        if not self.vector_enabled:
            use = "keyword"
        qvec = None
        if use != "keyword":
            qvec = await self._embed(query, None)
            if qvec is None:
                use = "keyword"
        filters, params = ["e.namespace = ?"], [namespace]
        if session_id is not None:
            filters.append("e.session_id = ?")
            params.append(session_id)
        if category is not None:
            filters.append("e.category = ?")
            params.append(category)
        if not include_superseded:
            filters.append(_NOT_SUPERSEDED)
        where = " AND ".join(filters)
        candidates = max(limit * 4, 32)
        # One statement (one trip to the worker thread) for both sides: the KNN runs first and
        # alone (MATERIALIZED), and its id column is not named rowid (a CTE's "rowid" would be
        # the CTE's own row number). Rows: entry columns, score, side (0 keyword, 1 vector).
        expr = fts_match_expression(query) if use != "vector" else None
        with_vec = use != "keyword" and qvec is not None and self._vec_table
        head = ""
        parts: builtins.list[str] = []
        args: builtins.list[Any] = []  # the CTEs' parameters, then the parts'
        part_args: builtins.list[Any] = []
        if with_vec:
            narrowed = session_id is not None or category is not None
            # Session/category filters apply after the KNN: ask for more neighbours then.
            k = min(_KNN_MAX, max(limit * 16, 256)) if narrowed else candidates
            head = (
                "WITH knn AS MATERIALIZED (SELECT rowid AS entry_id, distance FROM entries_vec "
                "WHERE embedding MATCH ? AND k = ? AND namespace = ?) "
            )
            args += [qvec, k, namespace]
        if expr is not None:
            # The newest FTS_CANDIDATES matches, newest first (FTS5 walks its doclists by
            # rowid and stops at the LIMIT), are ranked; BM25 is computed for those only.
            # CROSS JOIN keeps them the outer loop: with JOIN the planner walked every entry
            # of the namespace and probed the candidates (49 ms at 100k entries, 13 ms so).
            head += ", " if head else "WITH "
            head += (
                "fts AS MATERIALIZED (SELECT rowid AS entry_id, bm25(entries_fts) AS s "
                "FROM entries_fts WHERE entries_fts MATCH ? ORDER BY rowid DESC LIMIT ?) "
            )
            args += [expr, FTS_CANDIDATES]
            parts.append(
                f"SELECT * FROM (SELECT {_E_COLUMNS}, fts.s, 0 FROM fts CROSS JOIN entries e "
                f"ON e.id = fts.entry_id WHERE {where} ORDER BY fts.s LIMIT ?)"
            )
            part_args += [*params, candidates]
        if with_vec:
            parts.append(
                f"SELECT {_E_COLUMNS}, knn.distance, 1 FROM knn JOIN entries e "
                f"ON e.id = knn.entry_id WHERE {where}"
            )
            part_args += params
        if not parts:
            return []
        async with self._read("recall") as conn:
            rows = await conn.execute_fetchall(
                head + " UNION ALL ".join(parts), [*args, *part_args]
            )
        kw = keyword_scores((int(r[0]), float(r[10])) for r in rows if r[11] == 0)
        vec = vector_scores((int(r[0]), float(r[10])) for r in rows if r[11] == 1)
        by_id = {int(r[0]): r for r in rows}
        weights = {
            "keyword": (1.0, 0.0),
            "vector": (0.0, 1.0),
            "hybrid": (self.keyword_weight, self.vector_weight),
        }[use]
        ranked = merge_scores(
            kw,
            vec,
            keyword_weight=weights[0],
            vector_weight=weights[1],
            min_relevance=self.min_relevance,
        )[:limit]
        out = []
        for scored in ranked:
            found = entry_from_row(by_id[scored.rowid])
            found.score = scored.score
            out.append(found)
        return out

    async def get(self, key: str, *, namespace: str = "default") -> MemoryEntry | None:
        """The entry stored under ``key`` in ``namespace``, or None."""
        async with self._read("get") as conn:
            rows = await conn.execute_fetchall(
                f"SELECT {_COLUMNS} FROM entries WHERE namespace=? AND key=?", (namespace, key)
            )
        return entry_from_row(rows[0]) if rows else None

    async def list(
        self,
        *,
        namespace: str | None = "default",
        category: str | None = None,
        session_id: str | None = None,
        limit: int = 100,
    ) -> list[MemoryEntry]:
        """Entries, newest first; ``namespace=None`` lists every namespace."""
        return await self.export(
            namespace=namespace, category=category, session_id=session_id, limit=limit
        )

    async def export(
        self,
        *,
        namespace: str | None = None,
        session_id: str | None = None,
        category: str | None = None,
        since: float | None = None,
        until: float | None = None,
        limit: int | None = None,
    ) -> builtins.list[MemoryEntry]:
        """Entries matching every given filter (``since <= updated_at < until``), newest first."""
        filters, params = filters_sql(namespace, session_id, category, since, until)
        sql = f"SELECT {_COLUMNS} FROM entries e {filters} ORDER BY updated_at DESC, id DESC"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        async with self._read("export") as conn:
            rows = await conn.execute_fetchall(sql, params)
        return [entry_from_row(r) for r in rows]

    async def forget(self, key: str, *, namespace: str = "default") -> bool:
        """Delete by key; returns whether something was deleted."""
        async with self._write("forget") as conn:
            rows = await conn.execute_fetchall(
                "SELECT id FROM entries WHERE namespace=? AND key=?", (namespace, key)
            )
            if not rows:
                return False
            rowid = int(rows[0][0])
            self._core_changed = True
            await conn.execute("DELETE FROM entries WHERE id=?", (rowid,))
            if self._vec_table and self.vectors_loaded:
                await conn.execute("DELETE FROM entries_vec WHERE rowid=?", (rowid,))
        return True

    async def count(self, *, namespace: str | None = None) -> int:
        """How many entries (in ``namespace``, or in all)."""
        filters, params = filters_sql(namespace, None, None, None, None)
        async with self._read("count") as conn:
            rows = await conn.execute_fetchall(f"SELECT COUNT(*) FROM entries e {filters}", params)
        return int(rows[0][0])

    async def health_check(self) -> bool:
        """True if the database answers a query."""
        if self._state != "open":
            return False
        try:
            async with self._read("health check") as conn:
                await conn.execute_fetchall("SELECT 1 FROM schema_migrations LIMIT 1")
        except MemoryStoreError:
            return False
        return True


def _ids(conn: Any, entries: Sequence[MemoryEntry]) -> dict[tuple[str, str], tuple[int, float]]:
    """(namespace, key) -> (rowid, created_at) for stored entries (on the worker thread)."""
    by_ns: dict[str, builtins.list[str]] = {}
    for e in entries:
        by_ns.setdefault(e.namespace, []).append(e.key)
    out: dict[tuple[str, str], tuple[int, float]] = {}
    for namespace, keys in by_ns.items():
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), 500):
            chunk = unique[start : start + 500]
            found = conn.execute(
                "SELECT key, id, created_at FROM entries WHERE namespace=? AND key IN "
                f"({','.join('?' * len(chunk))})",
                (namespace, *chunk),
            ).fetchall()
            out.update(((namespace, r[0]), (int(r[1]), float(r[2]))) for r in found)
    return out


class _Opening:
    """What :meth:`SqliteMemory.open` returns: await it, or use it with ``async with``."""

    def __init__(self, memory: SqliteMemory) -> None:
        self._memory = memory

    def __await__(self) -> Generator[Any, None, SqliteMemory]:
        return self._memory.connect().__await__()

    async def __aenter__(self) -> SqliteMemory:
        return await self._memory.connect()

    async def __aexit__(self, *exc_info: object) -> None:
        await self._memory.aclose()

"""Open an aiosqlite connection with FTS5 and, when asked for, sqlite-vec.

One SQLite library per process where that is possible. A connection that needs no extension
(a memory store without an embedder, and ``state.db`` and the sensor history, which use the
standard module directly) is made by the standard ``sqlite3``: aiosqlite imports it anyway.
Only a memory store with an embedder asks for sqlite-vec (``load_vectors``); that connection
is made by the standard ``sqlite3`` where it can load extensions, else by sqlean.py, a drop-in
DB-API module with its own SQLite (this machine's Python is built without
``enable_load_extension``). sqlean and sqlite-vec are imported only then: sqlean maps a second
libsqlite (~1.4 MB RSS, ~1 MB more of imports). aiosqlite's ``connect()`` always calls
``sqlite3.connect``, but its public :class:`aiosqlite.Connection` takes any zero-argument
connector that it runs on its worker thread, so we hand it one that builds the connection we
want (no monkeypatching). If no vector support can be loaded, that is logged once and the
store runs keyword-only.

One file, one library: two SQLite libraries in one process do not see each other's POSIX
locks, so one process must not open the same file through both. A process opens
``memory.db`` with one configuration (the embedder is fixed until a restart), so all its
memory connections use one driver; other processes (the CLI beside the service) are safe
whatever library they use.

Sizes, chosen for a 512 MB Pi Zero 2 W (see docs/memory.md):

* ``cache_size = -4096``: at most 4 MiB of page cache per connection (SQLite's default is
  2 MiB). Pages are allocated as used, so a small database costs less; 4 MiB holds the FTS
  index pages a recall touches and the tail of a session's history.
* ``wal_autocheckpoint = 256`` pages (1 MiB at 4 KiB pages, default 1000 pages = 4 MiB):
  the WAL is folded into the database more often; memory writes are rare, so the extra
  checkpoints cost little, and a smaller WAL is less to replay after a power cut.
* ``journal_size_limit = 1 MiB``: after a checkpoint, a WAL that one large transaction (an
  import, a prune) grew is cut back to 1 MiB when it is reused, instead of staying at its
  high-water mark for the life of the service.
* On close, ``wal_checkpoint(TRUNCATE)`` empties the WAL even when another process (the CLI
  beside the service) keeps the database open and SQLite would not delete it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar, cast

import msgspec

from clawseed_edge.api import MemoryStoreError

__all__ = [
    "CACHE_SIZE_KIB",
    "JOURNAL_SIZE_LIMIT",
    "MAX_BUSY_TIMEOUT_S",
    "STDLIB_LOADS_EXTENSIONS",
    "WAL_AUTOCHECKPOINT_PAGES",
    "OpenedConnection",
    "begin_write",
    "configure",
    "driver_errors",
    "open_connection",
    "run_in_worker",
    "sqlite_driver",
    "translate_error",
    "write_transaction",
]

log = logging.getLogger(__name__)

T = TypeVar("T")

_warned_no_vectors = False

#: Upper bound of ``busy_timeout_s``: longer than this, a turn looks hung.
MAX_BUSY_TIMEOUT_S = 600.0
#: Page cache per connection, KiB (set as ``PRAGMA cache_size = -4096``; see module doc).
CACHE_SIZE_KIB = 4096
#: Pages in the WAL before an automatic checkpoint (256 x 4 KiB = 1 MiB).
WAL_AUTOCHECKPOINT_PAGES = 256
#: Bytes a checkpointed WAL is truncated to when it is reused.
JOURNAL_SIZE_LIMIT = 1024 * 1024


async def configure(conn: Any, synchronous: str, busy_timeout_s: float) -> None:
    """Set WAL mode, durability, the busy wait and the sizes (see the module doc)."""
    await conn.execute("PRAGMA journal_mode=WAL")
    await conn.execute(f"PRAGMA synchronous={synchronous}")
    await conn.execute("PRAGMA foreign_keys=ON")
    # SQLite's own busy handler waits (sleeping and retrying) for another writer
    await conn.execute(f"PRAGMA busy_timeout={int(busy_timeout_s * 1000)}")
    await conn.execute(f"PRAGMA cache_size=-{CACHE_SIZE_KIB}")
    await conn.execute(f"PRAGMA wal_autocheckpoint={WAL_AUTOCHECKPOINT_PAGES}")
    await conn.execute(f"PRAGMA journal_size_limit={JOURNAL_SIZE_LIMIT}")


async def begin_write(conn: Any, path: object, what: str, busy_timeout_s: float) -> None:
    """``BEGIN IMMEDIATE``, waiting up to ``busy_timeout_s`` for another writer.

    SQLite's busy handler does the waiting; the loop covers the cases where SQLite reports
    busy at once without calling it. Cancel-safe (nothing is held until BEGIN succeeds).

    Raises:
        MemoryStoreError: still locked after ``busy_timeout_s``, naming the file, the
            operation and what to do.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + busy_timeout_s
    while True:
        try:
            await conn.execute("BEGIN IMMEDIATE")
            return
        except driver_errors() as exc:
            text = str(exc).lower()
            if "locked" not in text and "busy" not in text:
                raise
            if loop.time() >= deadline:
                raise _locked(path, what, busy_timeout_s) from exc
            await asyncio.sleep(min(0.05, max(0.0, deadline - loop.time())))


def _locked(path: object, what: str, busy_timeout_s: float) -> MemoryStoreError:
    return MemoryStoreError(
        f"memory database {path} is locked by another writer: waited "
        f"{busy_timeout_s:g} s, {what} was not saved. Another process "
        "(the clawseed-edge service, or a second command) is writing to it: "
        "let it finish or stop it, then try again (or raise [memory] busy_timeout_s)"
    )


async def run_in_worker(conn: Any, fn: Callable[[Any], T]) -> T:
    """Run ``fn(connection)`` on ``conn``'s worker thread with the driver's own connection.

    One trip to the thread for as many statements as ``fn`` runs: each aiosqlite call is a
    trip of its own (a queue put, a thread switch, a future set back on the loop), and a
    turn's writes were eleven of them. ``fn`` must not touch the event loop. Not safe to
    cancel midway: a cancelled caller stops waiting, and ``fn`` still runs to its end on the
    thread (a :func:`write_transaction` commits or rolls back whole).
    """
    # aiosqlite >= 0.20 runs every call through ``_execute(fn, ...)`` on its thread and
    # keeps the driver connection as ``_conn``; it offers no public way to run a function.
    return cast(T, await conn._execute(fn, conn._conn))


def write_transaction(
    connection: Any, body: Callable[[Any], T], *, path: object, what: str, busy_timeout_s: float
) -> T:
    """``BEGIN IMMEDIATE``, ``body(connection)``, ``COMMIT`` (``ROLLBACK`` on any error), on
    the worker thread: :func:`begin_write`'s wait for another writer, done there.

    Raises:
        MemoryStoreError: still locked after ``busy_timeout_s`` (as :func:`begin_write`).
    """
    deadline = time.monotonic() + busy_timeout_s
    while True:
        try:
            connection.execute("BEGIN IMMEDIATE")
            break
        except driver_errors() as exc:
            text = str(exc).lower()
            if "locked" not in text and "busy" not in text:
                raise
            if time.monotonic() >= deadline:
                raise _locked(path, what, busy_timeout_s) from exc
            time.sleep(min(0.05, max(0.0, deadline - time.monotonic())))
    try:
        result = body(connection)
        connection.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(*driver_errors()):
            connection.execute("ROLLBACK")
        raise
    return result


def driver_errors() -> tuple[type[BaseException], ...]:
    """The exception bases of the DB-API drivers loaded now: sqlite3's, and sqlean's once it
    is imported (its classes differ from sqlite3's).

    Not cached: sqlean may be imported later in the same process (a store with an embedder
    opened after one without). Importing sqlean for its exception class alone would map its
    libsqlite beside the standard one, so it is only looked up in ``sys.modules``.
    """
    sqlean = sys.modules.get("sqlean")
    if sqlean is None:
        return (sqlite3.Error,)
    return (sqlite3.Error, cast(type[BaseException], sqlean.Error))


def translate_error(exc: BaseException, what: str) -> MemoryStoreError:
    """A :class:`MemoryStoreError` naming the operation ``what`` and the driver's message."""
    return MemoryStoreError(f"memory {what} failed: {exc}")


class OpenedConnection(msgspec.Struct, frozen=True):
    """An open connection and what it can do.

    Attributes:
        conn: The aiosqlite connection (its own worker thread).
        vectors: Whether sqlite-vec is loaded.
        driver: ``sqlite3`` or ``sqlean``.
        reason: Why vectors are unavailable, if they are.
    """

    conn: Any
    vectors: bool
    driver: str
    reason: str = ""


#: Whether this Python's own ``sqlite3`` can load extensions (Debian's can; pyenv's often not).
STDLIB_LOADS_EXTENSIONS = hasattr(sqlite3.Connection, "enable_load_extension")


def sqlite_driver(*, extensions: bool) -> ModuleType:
    """The DB-API module for a connection: the standard ``sqlite3``, unless ``extensions`` are
    needed (sqlite-vec) and it cannot load them; then sqlean.py, imported here, if installed.
    """
    if not extensions or STDLIB_LOADS_EXTENSIONS:
        return sqlite3
    try:
        import sqlean
    except ImportError:
        return sqlite3
    return cast(ModuleType, sqlean)


def _load_vec(connection: Any) -> str:
    """Load sqlite-vec into ``connection``; returns "" or why it could not."""
    try:
        import sqlite_vec
    except ImportError as exc:
        return f"sqlite-vec is not installed ({exc})"
    if not hasattr(connection, "enable_load_extension"):
        return "this Python's sqlite3 cannot load extensions and sqlean.py is not installed"
    try:
        connection.enable_load_extension(True)
        connection.load_extension(sqlite_vec.loadable_path())
        connection.enable_load_extension(False)
    except (*driver_errors(), AttributeError, OSError) as exc:  # type: ignore[misc]
        return f"sqlite-vec could not be loaded ({exc})"
    return ""


async def open_connection(path: str | Path, *, load_vectors: bool = True) -> OpenedConnection:
    """Open ``path`` in autocommit mode on a dedicated worker thread.

    Args:
        path: The database file (``:memory:`` works too).
        load_vectors: Try to load sqlite-vec (through sqlean where the standard ``sqlite3``
            cannot load it). ``False`` connects through the standard ``sqlite3`` without it,
            imports neither (the keyword-only path of a store without an embedder).

    Raises:
        MemoryStoreError: The file cannot be opened (missing directory, not a database ...).
    """
    import aiosqlite

    driver = sqlite_driver(extensions=load_vectors)
    reason_box: list[str] = []
    failure: list[BaseException] = []

    def connector() -> sqlite3.Connection:
        try:
            connection = driver.connect(str(path), isolation_level=None)
        except driver_errors() as exc:
            # Hand aiosqlite a stand-in so that its worker thread is shut down through the
            # normal close() below; a connector that raises leaves the thread's last reply
            # to an event loop that may be gone.
            failure.append(exc)
            return cast(sqlite3.Connection, driver.connect(":memory:"))
        if load_vectors:
            reason_box.append(_load_vec(connection))
        else:
            reason_box.append("vector support disabled by the caller")
        return cast(sqlite3.Connection, connection)

    conn = aiosqlite.Connection(connector, 64)
    await conn
    if failure:
        await conn.close()
        raise MemoryStoreError(
            f"cannot open memory database {str(path)!r}: {failure[0]}"
        ) from failure[0]
    reason = reason_box[0] if reason_box else "unknown"
    vectors = reason == ""
    if not vectors and load_vectors:
        global _warned_no_vectors
        if not _warned_no_vectors:
            _warned_no_vectors = True
            log.warning("memory: no vector support, recall is keyword-only: %s", reason)
    return OpenedConnection(conn, vectors, driver.__name__.split(".")[0], reason)

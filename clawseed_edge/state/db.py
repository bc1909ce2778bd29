"""StateDB: ``state.db`` opened through aiosqlite, with versioned forward-only migrations.

aiosqlite runs the connection on its own worker thread (never blocking the loop). The schema
version is SQLite's ``user_version``; each migration runs in one transaction with the version
bump, so a crash mid-migration leaves the previous version intact.

The connection is made by the standard ``sqlite3`` (aiosqlite's own driver): state.db needs no
extension, so it never loads sqlean.py's second libsqlite. Only a memory store with an embedder
may (see ``memory/connect.py``); it opens another file.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import AsyncIterator, Iterable, Sequence
from pathlib import Path
from typing import Any

from clawseed_edge.api import ClawseedError, Lifecycle, ResourceClosed

__all__ = ["MIGRATIONS", "StateDB", "StateError"]

log = logging.getLogger(__name__)

#: Schema steps; index i migrates from version i to i + 1. Never edit a released step.
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE pairing_tokens (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        token_hash TEXT NOT NULL UNIQUE,
        created_at REAL NOT NULL,
        last_used_at REAL
    );
    """,
    # 2: the device ledger behind the hardware rate limits (state/ledger.py): one row per
    # charged call, ``cost`` switches at Unix time ``at``.
    """
    CREATE TABLE device_actions (
        key TEXT NOT NULL,
        at REAL NOT NULL,
        cost INTEGER NOT NULL
    );
    CREATE INDEX device_actions_key_at ON device_actions (key, at);
    """,
    # 3: scheduled jobs and their run history (clawseed_edge/scheduler/store.py). Times are
    # Unix seconds; ``schedule``/``action`` are JSON; a run's ``status`` is running, ok, failed,
    # skipped (it would have overlapped the previous run) or missed (the service was down).
    """
    CREATE TABLE jobs (
        name TEXT PRIMARY KEY,
        schedule TEXT NOT NULL,
        action TEXT NOT NULL,
        deliver TEXT NOT NULL,
        missed TEXT NOT NULL,
        enabled INTEGER NOT NULL,
        origin TEXT NOT NULL,
        created_at REAL NOT NULL,
        next_run REAL,
        last_run REAL
    );
    CREATE TABLE job_runs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        job TEXT NOT NULL,
        scheduled_for REAL NOT NULL,
        started_at REAL NOT NULL,
        finished_at REAL,
        status TEXT NOT NULL,
        output TEXT NOT NULL DEFAULT '',
        error TEXT
    );
    CREATE INDEX job_runs_job_started ON job_runs (job, started_at);
    """,
    # 4: automations (clawseed_edge/scheduler/automation_store.py): ``spec`` is the rule as
    # an [[automations]] table in JSON; ``origin`` config, cli or agent. A firing's ``event``
    # is fire or reset, ``action`` tool, prompt, message or none, ``ok`` 0/1 (a refusal is 0),
    # ``detail`` the output or the error (capped).
    """
    CREATE TABLE automations (
        name TEXT PRIMARY KEY,
        spec TEXT NOT NULL,
        origin TEXT NOT NULL,
        created_at REAL NOT NULL
    );
    CREATE TABLE automation_firings (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        automation TEXT NOT NULL,
        at REAL NOT NULL,
        event TEXT NOT NULL,
        action TEXT NOT NULL,
        ok INTEGER NOT NULL,
        detail TEXT NOT NULL DEFAULT ''
    );
    CREATE INDEX automation_firings_automation ON automation_firings (automation, id);
    """,
    # 5: the latched emergency stop (state/latch.py): one row, id 1; ``latched`` 0/1, ``why``
    # what stopped it, ``since`` and ``reset_at`` Unix times, ``reset_by`` who reset it.
    """
    CREATE TABLE estop_latch (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        latched INTEGER NOT NULL,
        why TEXT NOT NULL DEFAULT '',
        since REAL NOT NULL DEFAULT 0,
        reset_by TEXT NOT NULL DEFAULT '',
        reset_at REAL NOT NULL DEFAULT 0
    );
    """,
)


class StateError(ClawseedError, RuntimeError):
    """state.db could not be opened or used (the message names the file and what to do)."""

    code = "state_error"


def _create_private(file: Path) -> None:
    file.parent.mkdir(parents=True, exist_ok=True)
    if not file.exists():
        # Tokens are secrets (hashed, but still): only the owner reads the file.
        file.touch(mode=0o600)


class StateDB:
    """The open ``state.db``; create with :meth:`open`, close with :meth:`aclose` (idempotent).

    Use as ``async with await StateDB.open(path) as db``. A closed StateDB refuses work with
    :class:`~clawseed_edge.api.ResourceClosed`.
    """

    def __init__(self, conn: Any, path: Path) -> None:
        self._conn = conn
        self.path = path
        #: The DB-API module of the connection: always the standard ``sqlite3``.
        self.driver = "sqlite3"
        self.state = Lifecycle.OPEN

    @classmethod
    async def open(cls, path: str | os.PathLike[str]) -> StateDB:
        """Open (creating it, mode 0600) and migrate ``path``.

        Raises:
            StateError: The file cannot be opened or is from a newer version of clawseed-edge.

        Cancel-safe: a cancelled open closes the connection it made.
        """
        import aiosqlite

        file = Path(path)
        _create_private(file)
        try:
            conn = await aiosqlite.connect(file)
        except Exception as exc:
            raise StateError(
                f"cannot open {file}: {exc}; check the directory's permissions"
            ) from exc
        db = cls(conn, file)
        try:
            await db._migrate(MIGRATIONS)
        except BaseException:
            await db.aclose()
            raise
        return db

    async def _migrate(self, steps: Sequence[str]) -> None:
        async with self._conn.execute("PRAGMA user_version") as cur:
            row = await cur.fetchone()
        version = int(row[0]) if row else 0
        if version > len(steps):
            raise StateError(
                f"{self.path} has schema version {version}, newer than this clawseed-edge "
                f"knows ({len(steps)}); upgrade clawseed-edge or move the file away"
            )
        for number in range(version, len(steps)):
            await self._conn.executescript(
                f"BEGIN; {steps[number]} PRAGMA user_version = {number + 1}; COMMIT;"
            )
            log.info("state.db migrated to schema version %d", number + 1)

    async def execute(self, sql: str, params: Iterable[Any] = ()) -> int:
        """Run one statement and commit; returns the number of changed rows.

        Safe to cancel: the statement still finishes on aiosqlite's thread.
        """
        conn = self._require_open()
        cur = await conn.execute(sql, tuple(params))
        await conn.commit()
        return int(cur.rowcount)

    async def fetchall(self, sql: str, params: Iterable[Any] = ()) -> list[tuple[Any, ...]]:
        """Rows of one query.

        Safe to cancel.
        """
        conn = self._require_open()
        async with conn.execute(sql, tuple(params)) as cur:
            return [tuple(r) for r in await cur.fetchall()]

    @contextlib.asynccontextmanager
    async def immediate(self) -> AsyncIterator[Any]:
        """A write transaction taken at once (``BEGIN IMMEDIATE``); yields the connection.

        A read-then-write inside it cannot race another process: a second writer waits (the
        connection's busy timeout) and then sees this one's rows. Commits when the block ends,
        rolls back when it raises. Not safe to cancel halfway; callers serialise their own
        transactions on one StateDB (they share its connection).
        """
        conn = self._require_open()
        await conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            await conn.rollback()
            raise
        await conn.commit()

    async def schema_version(self) -> int:
        """The schema version (``PRAGMA user_version``). Safe to cancel."""
        rows = await self.fetchall("PRAGMA user_version")
        return int(rows[0][0])

    def _require_open(self) -> Any:
        if self.state is not Lifecycle.OPEN:
            raise ResourceClosed(f"state.db at {self.path} is closed; open it again")
        return self._conn

    async def aclose(self) -> None:
        """Close the connection and its worker thread. Idempotent.

        Safe to cancel.
        """
        if self.state is Lifecycle.CLOSED:
            return
        self.state = Lifecycle.CLOSED
        await self._conn.close()

    async def __aenter__(self) -> StateDB:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

"""``DeviceLedger``: the recent device actions in ``state.db``, shared by every process.

The SecurityPolicy charges each device write to an :class:`~clawseed_edge.api.ActionLedger`;
with this one, four one-shot ``agent`` runs in a minute see each other's switches, so a pump
limited to one switch a minute switches once. Each charge is one ``BEGIN IMMEDIATE``
transaction (count the window, insert, prune), so two processes cannot both take the last
switch. The connection runs on aiosqlite's worker thread and is opened on first use: a config
without rate-limited devices never opens the file.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from clawseed_edge.api import ClawseedError, Lifecycle, ResourceClosed

__all__ = ["SCHEMA", "DeviceLedger", "LedgerError"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS device_actions (
    key TEXT NOT NULL,
    at REAL NOT NULL,
    cost INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS device_actions_key_at ON device_actions (key, at);
"""
"""The ledger's table: one row per charged call (``cost`` switches at time ``at``)."""

KEEP_S = 3600.0
"""Rows older than this (seconds before the newest charge of their key) are deleted."""


class LedgerError(ClawseedError, RuntimeError):
    """state.db could not be opened or used for the ledger (names the file and what to do)."""

    code = "ledger_error"


class DeviceLedger:
    """An :class:`~clawseed_edge.api.ActionLedger` in a SQLite file (``state.db``).

    Args:
        path: The database file; created (mode 0600) with its directory when first used.
        busy_timeout_s: How long a charge waits for another process's transaction, seconds.

    Times are Unix seconds: they are compared between processes and across restarts.
    Close with :meth:`aclose` (idempotent); a closed ledger refuses work with ResourceClosed.
    """

    def __init__(self, path: str | os.PathLike[str], *, busy_timeout_s: float = 5.0) -> None:
        self.path = Path(path)
        self.busy_timeout_s = busy_timeout_s
        self._conn: Any = None
        self._lock = asyncio.Lock()
        self.state = Lifecycle.UNOPENED

    async def _connection(self) -> Any:
        if self.state is Lifecycle.CLOSED:
            raise ResourceClosed(f"the device ledger at {self.path} is closed")
        if self._conn is None:
            import aiosqlite

            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                if not self.path.exists():
                    self.path.touch(mode=0o600)
                # isolation_level=None: we begin our own (IMMEDIATE) transactions.
                conn = await aiosqlite.connect(
                    self.path, timeout=self.busy_timeout_s, isolation_level=None
                )
            except Exception as exc:
                raise LedgerError(
                    f"cannot open {self.path} ({exc}); check that the clawseed-edge home is "
                    "writable by this user"
                ) from exc
            try:
                await conn.executescript(SCHEMA)
            except BaseException:
                await conn.close()
                raise
            self._conn = conn
            self.state = Lifecycle.OPEN
        return self._conn

    async def recent(self, key: str, since: float) -> list[float]:
        """The times charged to ``key`` after ``since``, oldest first (cost n: n times)."""
        async with self._lock:
            conn = await self._connection()
            async with conn.execute(
                "SELECT at, cost FROM device_actions WHERE key = ? AND at > ? ORDER BY at",
                (key, since),
            ) as cur:
                rows = await cur.fetchall()
        return [float(at) for at, cost in rows for _ in range(int(cost))]

    async def charge(self, key: str, at: float, cost: int, *, limit: int, since: float) -> bool:
        """Record ``cost`` actions at ``at`` if they fit ``limit`` with those after ``since``.

        One IMMEDIATE transaction: a second process waits (up to ``busy_timeout_s``) and then
        sees this charge. Not safe to cancel halfway: the transaction finishes on the worker.
        """
        async with self._lock:
            conn = await self._connection()
            await conn.execute("BEGIN IMMEDIATE")
            try:
                async with conn.execute(
                    "SELECT COALESCE(SUM(cost), 0) FROM device_actions WHERE key = ? AND at > ?",
                    (key, since),
                ) as cur:
                    row = await cur.fetchone()
                used = int(row[0]) if row else 0
                fits = used + cost <= limit
                if fits:
                    await conn.execute(
                        "INSERT INTO device_actions (key, at, cost) VALUES (?, ?, ?)",
                        (key, at, cost),
                    )
                    await conn.execute(
                        "DELETE FROM device_actions WHERE key = ? AND at < ?", (key, at - KEEP_S)
                    )
                await conn.execute("COMMIT")
            except BaseException:
                await conn.execute("ROLLBACK")
                raise
        return fits

    async def aclose(self) -> None:
        """Close the connection (and its worker thread). Idempotent."""
        self.state = Lifecycle.CLOSED
        conn, self._conn = self._conn, None
        if conn is not None:
            await conn.close()

    async def __aenter__(self) -> DeviceLedger:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

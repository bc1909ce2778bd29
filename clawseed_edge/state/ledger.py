"""``DeviceLedger``: the recent device actions in ``state.db``, shared by every process.

The SecurityPolicy charges each device write to an :class:`~clawseed_edge.api.ActionLedger`;
with this one, four one-shot ``agent`` runs in a minute see each other's switches, so a pump
limited to one switch a minute switches once. The table is ``device_actions`` (migration 2 of
:data:`~.db.MIGRATIONS`). Each charge is one ``BEGIN IMMEDIATE`` transaction (count the window,
insert, prune), so two processes cannot both take the last switch. The :class:`~.db.StateDB`
is opened on first use: a config without rate-limited devices never opens the file.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from clawseed_edge.api import Lifecycle, ResourceClosed

from .db import StateDB

__all__ = ["KEEP_S", "DeviceLedger"]

KEEP_S = 3600.0
"""Rows older than this (seconds before the newest charge of their key) are deleted."""


class DeviceLedger:
    """An :class:`~clawseed_edge.api.ActionLedger` in ``state.db``.

    Args:
        path: The database file; created (mode 0600) and migrated when first used.

    Times are Unix seconds: they are compared between processes and across restarts.
    Close with :meth:`aclose` (idempotent); a closed ledger refuses work with ResourceClosed.

    Raises (from any method): StateError when the file cannot be opened or is from a newer
    version (the message names the file and what to do).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._db: StateDB | None = None
        # One transaction at a time on the shared connection (a charge spans several awaits).
        self._lock = asyncio.Lock()
        self.state = Lifecycle.UNOPENED

    async def _open(self) -> StateDB:
        if self.state is Lifecycle.CLOSED:
            raise ResourceClosed(f"the device ledger at {self.path} is closed")
        if self._db is None:
            self._db = await StateDB.open(self.path)
            self.state = Lifecycle.OPEN
        return self._db

    async def recent(self, key: str, since: float) -> list[float]:
        """The times charged to ``key`` after ``since``, oldest first (cost n: n times)."""
        async with self._lock:
            db = await self._open()
            rows = await db.fetchall(
                "SELECT at, cost FROM device_actions WHERE key = ? AND at > ? ORDER BY at",
                (key, since),
            )
        return [float(at) for at, cost in rows for _ in range(int(cost))]

    async def charge(self, key: str, at: float, cost: int, *, limit: int, since: float) -> bool:
        """Record ``cost`` actions at ``at`` if they fit ``limit`` with those after ``since``.

        One IMMEDIATE transaction: a second process waits (the busy timeout) and then sees
        this charge. Not safe to cancel halfway: the transaction finishes on the worker.
        """
        async with self._lock:
            db = await self._open()
            async with db.immediate() as conn:
                async with conn.execute(
                    "SELECT COALESCE(SUM(cost), 0) FROM device_actions WHERE key = ? AND at > ?",
                    (key, since),
                ) as cur:
                    row = await cur.fetchone()
                fits = (int(row[0]) if row else 0) + cost <= limit
                if fits:
                    await conn.execute(
                        "INSERT INTO device_actions (key, at, cost) VALUES (?, ?, ?)",
                        (key, at, cost),
                    )
                    await conn.execute(
                        "DELETE FROM device_actions WHERE key = ? AND at < ?", (key, at - KEEP_S)
                    )
        return fits

    async def aclose(self) -> None:
        """Close the database (and its worker thread). Idempotent."""
        self.state = Lifecycle.CLOSED
        db, self._db = self._db, None
        if db is not None:
            await db.aclose()

    async def __aenter__(self) -> DeviceLedger:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

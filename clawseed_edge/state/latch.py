"""``LatchStore``: the latched emergency stop in ``state.db``, so it survives a restart.

One row (``estop_latch``, migration 5 of :data:`~.db.MIGRATIONS`). The service reads it before
it connects any hardware (a latched stop brings every output up at its safe level, never at
``initial``) and writes it after every engage and reset of its
:class:`~clawseed_edge.api.EstopLatch`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from clawseed_edge.api import LatchState

from .db import StateDB

__all__ = ["LatchStore", "read_stored_latch"]

_SELECT = "SELECT latched, why, since, reset_by, reset_at FROM estop_latch WHERE id = 1"


class LatchStore:
    """The latch row of an open :class:`~.db.StateDB`.

    Raises (from any method): ResourceClosed when the database was closed.
    """

    def __init__(self, db: StateDB) -> None:
        self.db = db

    async def load(self) -> LatchState:
        """The stored state; not latched when nothing was ever stored. Safe to cancel."""
        return _state(await self.db.fetchall(_SELECT))

    async def save(self, state: LatchState) -> None:
        """Store ``state`` (one statement, committed). Safe to cancel: it still finishes."""
        await self.db.execute(
            "INSERT INTO estop_latch (id, latched, why, since, reset_by, reset_at) "
            "VALUES (1, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET latched = excluded.latched, "
            "why = excluded.why, since = excluded.since, reset_by = excluded.reset_by, "
            "reset_at = excluded.reset_at",
            (int(state.latched), state.why, state.since, state.reset_by, state.reset_at),
        )


def read_stored_latch(path: Path) -> LatchState:
    """The latch in ``path`` read once, read-only, without migrating or creating the file: for
    a one-shot process (``agent``, ``chat``) that opens the hardware with no service running.
    Not latched when the file or the table is not there. Blocking: run it on a thread.

    Raises:
        sqlite3.Error: The file is there but cannot be read (corrupt, locked for too long).
    """
    if not path.exists():
        return LatchState()
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=5.0)
    try:
        return _state(conn.execute(_SELECT).fetchall())
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return LatchState()  # a state.db from before the latch: never latched
        raise
    finally:
        conn.close()


def _state(rows: Sequence[Sequence[Any]]) -> LatchState:
    if not rows:
        return LatchState()
    latched, why, since, reset_by, reset_at = rows[0]
    return LatchState(bool(latched), str(why), float(since), str(reset_by), float(reset_at))

"""``LatchStore``: the latched emergency stop in ``state.db``, so it survives a restart.

One row (``estop_latch``, migration 5 of :data:`~.db.MIGRATIONS`). The service reads it before
it connects any hardware (a latched stop brings every output up at its safe level, never at
``initial``) and writes it after every engage and reset of its
:class:`~clawseed_edge.api.EstopLatch`.
"""

from __future__ import annotations

from clawseed_edge.api import LatchState

from .db import StateDB

__all__ = ["LatchStore"]


class LatchStore:
    """The latch row of an open :class:`~.db.StateDB`.

    Raises (from any method): ResourceClosed when the database was closed.
    """

    def __init__(self, db: StateDB) -> None:
        self.db = db

    async def load(self) -> LatchState:
        """The stored state; not latched when nothing was ever stored. Safe to cancel."""
        rows = await self.db.fetchall(
            "SELECT latched, why, since, reset_by, reset_at FROM estop_latch WHERE id = 1"
        )
        if not rows:
            return LatchState()
        latched, why, since, reset_by, reset_at = rows[0]
        return LatchState(bool(latched), str(why), float(since), str(reset_by), float(reset_at))

    async def save(self, state: LatchState) -> None:
        """Store ``state`` (one statement, committed). Safe to cancel: it still finishes."""
        await self.db.execute(
            "INSERT INTO estop_latch (id, latched, why, since, reset_by, reset_at) "
            "VALUES (1, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET latched = excluded.latched, "
            "why = excluded.why, since = excluded.since, reset_by = excluded.reset_by, "
            "reset_at = excluded.reset_at",
            (int(state.latched), state.why, state.since, state.reset_by, state.reset_at),
        )

"""Approval messages a channel showed (chat and message ids), so a restart can expire them.

An approval request lives in one process: after a restart its buttons must do nothing, and
the messages that still show them are edited to say so. The channel records each message it
sends with buttons (:meth:`ShownApprovals.add`), drops them when the request is resolved
(:meth:`ShownApprovals.drop`) and, at start, takes every one left by a previous process
(:meth:`ShownApprovals.take_all`) to edit it to "expired".

The table is created on first use (``CREATE TABLE IF NOT EXISTS``), not by a numbered
migration: it holds only what one process showed, and an older version ignores it.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from .db import StateDB

__all__ = ["ShownApprovals"]

#: Rows kept per channel at most (the oldest go first): a flood cannot grow the file.
MAX_SHOWN = 1000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS shown_approvals (
    channel TEXT NOT NULL,
    request_id TEXT NOT NULL,
    chat TEXT NOT NULL,
    message TEXT NOT NULL,
    text TEXT NOT NULL,
    shown_at REAL NOT NULL
)
"""


class ShownApprovals:
    """The approval messages of one channel in state.db."""

    def __init__(
        self, db: StateDB, channel: str, *, clock: Callable[[], float] = time.time
    ) -> None:
        self._db = db
        self.channel = channel
        self._clock = clock
        self._ready = False

    async def _table(self) -> None:
        if not self._ready:
            await self._db.execute(_SCHEMA)
            self._ready = True

    async def add(self, request_id: str, chat: str, message: str, text: str) -> None:
        """Remember one message showing ``request_id``'s buttons. Safe to cancel."""
        await self._table()
        await self._db.execute(
            "INSERT INTO shown_approvals (channel, request_id, chat, message, text, shown_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (self.channel, request_id, chat, message, text[:4096], self._clock()),
        )
        await self._db.execute(
            "DELETE FROM shown_approvals WHERE channel = ? AND rowid NOT IN (SELECT rowid FROM "
            "shown_approvals WHERE channel = ? ORDER BY shown_at DESC LIMIT ?)",
            (self.channel, self.channel, MAX_SHOWN),
        )

    async def drop(self, request_id: str) -> None:
        """Forget the messages of ``request_id`` (it was resolved). Safe to cancel."""
        await self._table()
        await self._db.execute(
            "DELETE FROM shown_approvals WHERE channel = ? AND request_id = ?",
            (self.channel, request_id),
        )

    async def take_all(self) -> list[tuple[str, str, str, str]]:
        """Every remembered message ``(request_id, chat, message, text)``, forgotten at once
        (a previous process's: their requests are gone). Safe to cancel."""
        await self._table()
        rows = await self._db.fetchall(
            "SELECT request_id, chat, message, text FROM shown_approvals WHERE channel = ? "
            "ORDER BY shown_at",
            (self.channel,),
        )
        await self._db.execute("DELETE FROM shown_approvals WHERE channel = ?", (self.channel,))
        return [(str(a), str(b), str(c), str(d)) for a, b, c, d in rows]

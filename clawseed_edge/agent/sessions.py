"""Sessions: each conversation's history, loaded from the store on first use and saved per turn.

One :class:`Sessions` belongs to one Agent; a turn (:class:`~.turn.TurnRunner`) opens its
session here and saves its new messages here, and never sees the Agent's other parts.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from clawseed_edge.api import ChatMessage, ErrorObserved, ObserverEvent, SessionStore

from .history import History

__all__ = ["Session", "Sessions"]

log = logging.getLogger(__name__)


@dataclass(slots=True)
class Session:
    """One session's in-memory history; its lock makes its turns run one at a time."""

    history: History
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


class Sessions:
    """The sessions of one Agent.

    Args:
        store: Where histories are loaded from and appended to (None: in memory only).
        max_history: Messages kept per session (only the tail is loaded from the store).
        record: Receives an ``ErrorObserved`` when the store fails (never raises).
    """

    def __init__(
        self,
        store: SessionStore | None,
        max_history: int,
        record: Callable[[ObserverEvent], None],
    ) -> None:
        self.store = store
        self.max_history = max_history
        self._record = record
        self._sessions: dict[str, Session] = {}

    def history(self, session_id: str) -> tuple[ChatMessage, ...]:
        """The in-memory history of a session (empty if it has not run a turn)."""
        session = self._sessions.get(session_id)
        return session.history.messages if session is not None else ()

    def reset(self, session_id: str) -> None:
        """Forget a session's in-memory history (the store is not touched)."""
        self._sessions.pop(session_id, None)

    async def open(self, session_id: str) -> Session:
        """The session, loaded from the store on its first use (a failed load starts empty and
        is recorded). Cancel-safe."""
        session = self._sessions.get(session_id)
        if session is not None:
            return session
        loaded: list[ChatMessage] = []
        if self.store is not None:
            try:
                # Only the tail that is used: 100k stored messages must not be read to keep 50.
                stored = await self.store.load_history(session_id, limit=self.max_history)
                loaded = [m for m in stored if m.role != "system"]
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("could not load history of session %s: %s", session_id, exc)
                self._record(ErrorObserved("session_store", str(exc)))
        session = self._sessions.get(session_id)  # another turn may have created it meanwhile
        if session is None:
            history = History(self.max_history, loaded)
            history.trim()
            session = self._sessions[session_id] = Session(history)
        return session

    async def persist(self, session_id: str, messages: list[ChatMessage]) -> Exception | None:
        """Save a turn's new messages; returns the failure (the turn reports it), never raises."""
        if self.store is None or not messages:
            return None
        try:
            await self.store.append_history(session_id, list(messages))
        except Exception as exc:
            log.warning("could not save history of session %s: %s", session_id, exc)
            self._record(ErrorObserved("session_store", str(exc)))
            return exc
        return None

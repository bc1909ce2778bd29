"""NoneMemory: the stand-in when the memory database cannot be opened.

Reads return nothing, writes raise :class:`MemoryUnavailable` carrying the reason, so the agent
keeps working and memory tools can tell the user why memory is off.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence

from clawseed_edge.api import ChatMessage, MemoryEntry, MemoryUnavailable, SessionInfo

__all__ = ["NoneMemory"]


class NoneMemory:
    """Implements api ``Memory`` and ``SessionStore`` with no storage.

    Args:
        reason: Why memory is unavailable ("cannot open /x/memory.db: disk full"); shown to
            the user by the memory tools and in every :class:`MemoryUnavailable`.
    """

    def __init__(self, reason: str = "memory is disabled in the configuration") -> None:
        self.reason = reason

    def _unavailable(self) -> MemoryUnavailable:
        return MemoryUnavailable(f"memory is unavailable: {self.reason}")

    async def store(self, entry: MemoryEntry) -> MemoryEntry:
        """Always raises :class:`MemoryUnavailable`."""
        raise self._unavailable()

    async def recall(
        self,
        query: str,
        *,
        limit: int = 5,
        namespace: str = "default",
        session_id: str | None = None,
        category: str | None = None,
    ) -> list[MemoryEntry]:
        return []

    async def get(self, key: str, *, namespace: str = "default") -> MemoryEntry | None:
        return None

    async def list(
        self,
        *,
        namespace: str | None = "default",
        category: str | None = None,
        session_id: str | None = None,
        limit: int = 100,
    ) -> builtins.list[MemoryEntry]:
        return []

    async def forget(self, key: str, *, namespace: str = "default") -> bool:
        """Always raises :class:`MemoryUnavailable`."""
        raise self._unavailable()

    async def count(self, *, namespace: str | None = None) -> int:
        return 0

    async def health_check(self) -> bool:
        return False

    async def aclose(self) -> None:
        return None

    async def load_history(
        self, session_id: str, *, limit: int | None = None
    ) -> builtins.list[ChatMessage]:
        return []

    async def append_history(self, session_id: str, messages: Sequence[ChatMessage]) -> None:
        """Always raises :class:`MemoryUnavailable` (history is not persisted)."""
        raise self._unavailable()

    async def list_sessions(self, *, limit: int = 50) -> builtins.list[SessionInfo]:
        return []

    async def delete_session(self, session_id: str) -> bool:
        raise self._unavailable()

"""Resource subscriptions, keyed by the transport session that made them.

A session is one stdio connection, or one ``Mcp-Session-Id`` on ``/mcp``. Its subscriptions
are capped per session, per owner (a paired token: its sessions together) and in total, and
are freed when the session ends (:meth:`SubscriptionTable.drop`), so a client can neither grow
the service nor leave growth behind. The backend's state watch runs only while any
subscription is held.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from clawseed_edge.tools.mcp_wire import INVALID_PARAMS, RpcError

__all__ = ["SubscriptionTable"]

log = logging.getLogger(__name__)

#: Subscriptions one session, one owner (all its sessions) and everyone together may hold.
MAX_PER_SESSION = 64
MAX_PER_OWNER = 256
MAX_TOTAL = 2048
#: How long a subscribe waits for the backend's watch to be live.
WATCH_READY_TIMEOUT_S = 5.0

#: Sends ``notifications/resources/updated`` for one URI to a session (never blocks).
Notify = Callable[[str], None]


class SubscriptionTable:
    """Who subscribed to what; a state change notifies the sessions that asked for it."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        self._uris: dict[str, set[str]] = {}  # session key -> URIs
        self._owner: dict[str, str] = {}  # session key -> owner
        self._notify: dict[str, Notify] = {}  # session key -> its notifier
        self._stop: Callable[[], None] | None = None

    def __len__(self) -> int:
        return sum(len(uris) for uris in self._uris.values())

    def owned_by(self, owner: str) -> int:
        return sum(len(u) for k, u in self._uris.items() if self._owner.get(k) == owner)

    async def add(self, session: str, owner: str, uri: str, notify: Notify) -> None:
        """Subscribe ``session`` to ``uri``; returns once the backend's watch is live.

        Raises:
            RpcError: ``INVALID_PARAMS`` over a cap (the message names it and what to do).
        """
        uris = self._uris.get(session, set())
        if uri not in uris:
            if len(uris) >= MAX_PER_SESSION:
                raise _over(f"{MAX_PER_SESSION} per session")
            if self.owned_by(owner) >= MAX_PER_OWNER:
                raise _over(f"{MAX_PER_OWNER} per paired client")
            if len(self) >= MAX_TOTAL:
                raise _over(f"{MAX_TOTAL} on this board")
        self._uris.setdefault(session, set()).add(uri)
        self._owner[session] = owner
        self._notify[session] = notify
        if self._stop is None:
            watch = getattr(self.backend, "watch", None)
            self._stop = watch(self._changed) if watch is not None else (lambda: None)
        ready = getattr(self.backend, "watch_ready", None)
        if ready is not None:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(WATCH_READY_TIMEOUT_S):
                    await ready()

    def remove(self, session: str, uri: str) -> None:
        uris = self._uris.get(session)
        if uris is not None:
            uris.discard(uri)
            if not uris:
                self.drop(session)

    def drop(self, session: str) -> None:
        """The session ended: forget its subscriptions (the watch stops with the last one)."""
        self._uris.pop(session, None)
        self._owner.pop(session, None)
        self._notify.pop(session, None)
        if not self._uris and self._stop is not None:
            stop, self._stop = self._stop, None
            stop()

    def _changed(self, uris: list[str]) -> None:
        for session, wanted in list(self._uris.items()):
            notify = self._notify.get(session)
            for uri in uris:
                if uri in wanted and notify is not None:
                    notify(uri)


def _over(which: str) -> RpcError:
    return RpcError(
        INVALID_PARAMS,
        f"too many resource subscriptions (at most {which}); unsubscribe from some first",
    )

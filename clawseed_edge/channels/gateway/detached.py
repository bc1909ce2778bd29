"""Turns whose client went away, kept running, and the frames they sent meanwhile."""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["FINAL_TYPES", "DetachedTurns"]

#: Frames of a detached turn kept for the client that resumes its session (the final one is
#: always kept), and sessions with such frames kept at once (the oldest are forgotten).
UNDELIVERED_FRAMES = 256
UNDELIVERED_SESSIONS = 64
FINAL_TYPES = ("done", "aborted", "error")


class DetachedTurns:
    """Turns whose client went away, and the frames they sent meanwhile, per session.

    A turn keeps running when its socket drops (the phone changed networks; a relay may be
    switching); its frames go to whichever connection holds the session now, else they wait
    here for the client that resumes it. Bounded: :data:`UNDELIVERED_FRAMES` per session,
    :data:`UNDELIVERED_SESSIONS` sessions.
    """

    def __init__(self) -> None:
        self.running: dict[str, tuple[asyncio.Task[None], Any]] = {}
        self.frames: dict[str, list[dict[str, Any]]] = {}

    def keep(self, session_id: str, frame: dict[str, Any]) -> None:
        frames = self.frames.pop(session_id, [])
        self.frames[session_id] = frames  # the most recent session last
        frames.append(frame)
        if len(frames) > UNDELIVERED_FRAMES:
            del frames[0]
        while len(self.frames) > UNDELIVERED_SESSIONS:
            del self.frames[next(iter(self.frames))]

    def take(self, session_id: str) -> list[dict[str, Any]]:
        return self.frames.pop(session_id, [])

    def abort_all(self, reason: str) -> None:
        for session_id, (_, agent) in list(self.running.items()):
            agent.abort(session_id, reason)

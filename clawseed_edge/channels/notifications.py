"""Notifications: a scheduled job's answer, an alert or an emergency stop, to the channels
that asked for it.

A channel subscribes to the kinds of frame it wants (``job_result``, ``estop`` ...; all of
them by default) and gets each one through its ``deliver``. A frame with ``to`` (an automation's
``notify = ["phones", "telegram", "log"]``) goes only to those places: ``phones`` is the
gateway, another place is the channel of that name, ``log`` the log. What no channel took is
logged instead, so an answer is never lost without a trace.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from clawseed_edge.api import Channel

__all__ = ["Notifications"]

log = logging.getLogger(__name__)

#: A ``to`` place -> the channel's name, where they differ.
_PLACES = {"phones": "gateway"}


class Notifications:
    """Routes notification frames (each with a ``type``) to the channels that asked for them."""

    def __init__(self) -> None:
        self._routes: list[tuple[Channel, frozenset[str] | None]] = []

    def subscribe(self, channel: Channel, kinds: Iterable[str] | None = None) -> Callable[[], None]:
        """Deliver frames of ``kinds`` (every kind when None) to ``channel``; returns the
        function that stops it."""
        route = (channel, None if kinds is None else frozenset(kinds))
        self._routes.append(route)

        def unsubscribe() -> None:
            if route in self._routes:
                self._routes.remove(route)

        return unsubscribe

    def notify(self, frame: Mapping[str, Any]) -> int:
        """Deliver ``frame`` to every channel that asked for its kind; returns how many got it.

        Never raises for a channel's error (it is logged and the others still get the frame).
        """
        kind = str(frame.get("type", ""))
        to = frame.get("to")
        wanted = None if to is None else {_PLACES.get(str(p), str(p)) for p in to}
        reached = 0
        for channel, kinds in list(self._routes):
            if kinds is not None and kind not in kinds:
                continue
            if wanted is not None and channel.name not in wanted:
                continue
            try:
                channel.deliver(frame)
                reached += 1
            except Exception:
                log.exception("channel %s could not take a %s notification", channel.name, kind)
        if wanted is not None and "log" in wanted:
            log.info("%s: %s", kind or "notification", frame.get("text") or dict(frame))
        elif not reached:
            log.info("%s (no channel asked for it): %s", kind or "notification", dict(frame))
        return reached

"""Bounds on what a client sends: JSON depth and size, request rates, echoed text.

Pure functions and small classes with an injectable clock, so they are tested without sockets.
"""

from __future__ import annotations

import json
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from .errors import ClientError

__all__ = [
    "MAX_JSON_DEPTH",
    "RateLimiter",
    "address_group",
    "clip",
    "connect_key",
    "loads_bounded",
    "message_key",
]

MAX_JSON_DEPTH = 32
ECHO_CHARS = 80


def address_group(host: str) -> str:
    """The key of a client's address for per-address limits: an IPv6 address by its /64 (one
    home or one machine gets a whole /64, so its addresses are one client), else as it is."""
    if ":" not in host:
        return host
    import ipaddress

    try:
        address = ipaddress.IPv6Address(host.split("%", 1)[0])
    except ValueError:
        return host
    if address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)
    return str(ipaddress.IPv6Network((address, 64), strict=False))


def clip(text: object, limit: int = ECHO_CHARS) -> str:
    """``text`` as one line of at most ``limit`` characters: what we echo back of client input."""
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _depth(value: Any, limit: int) -> int:
    # Iterative, so a hostile document cannot blow the Python stack while we measure it.
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, level)
            if deepest > limit:
                return deepest
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, level + 1) for child in children)
    return deepest


def loads_bounded(raw: str | bytes, *, max_bytes: int, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """Parse JSON that is at most ``max_bytes`` long and ``max_depth`` levels deep.

    Raises:
        ClientError: too large (``too_large``, 413), not JSON (``json_invalid``), too deep
            (``json_too_deep``).
    """
    size = len(raw.encode("utf-8") if isinstance(raw, str) else raw)
    if size > max_bytes:
        raise ClientError(
            "too_large",
            f"the message is {size} bytes, over the limit of {max_bytes}; send less "
            "(the limit is [gateway] max_body_bytes / max_frame_bytes)",
            413,
        )
    try:
        value = json.loads(raw)
    except RecursionError:
        raise ClientError(
            "json_too_deep", f"the JSON nests deeper than {max_depth} levels; flatten it"
        ) from None
    except ValueError as exc:
        raise ClientError(
            "json_invalid", f"the message is not valid JSON ({clip(exc)}); send a JSON object"
        ) from None
    if _depth(value, max_depth) > max_depth:
        raise ClientError(
            "json_too_deep", f"the JSON nests deeper than {max_depth} levels; flatten it"
        )
    return value


def connect_key(token_id: str) -> str:
    """The rate key of a token's WebSocket connects, counted apart from its requests and its
    messages: a phone that reconnects often must not use up the budget of what it sends."""
    return f"connect:{token_id}"


def message_key(token_id: str) -> str:
    """The rate key of the chat messages (``message``, ``regenerate``) a token sends."""
    return f"message:{token_id}"


class RateLimiter:
    """At most ``per_minute`` hits per key in any sliding 60 s window.

    Each key has its own window: HTTP requests (``token:ID``, ``addr:HOST``), WebSocket
    connects (:func:`connect_key`) and chat messages (:func:`message_key`) are counted apart.

    Args:
        per_minute: The limit (0 or less: unlimited).
        clock: Monotonic seconds (tests pass a fake).
        max_keys: Keys remembered; the oldest is forgotten past it (bounds memory).
    """

    def __init__(
        self, per_minute: int, *, clock: Callable[[], float] = time.monotonic, max_keys: int = 4096
    ) -> None:
        self.per_minute = per_minute
        self._clock = clock
        self._max_keys = max_keys
        self._hits: dict[str, deque[float]] = {}

    def hit(self, key: str) -> None:
        """Count one request for ``key``.

        Raises:
            ClientError: ``rate_limited`` (429, with ``Retry-After``) when over the limit.
        """
        if self.per_minute <= 0:
            return
        now = self._clock()
        window = self._hits.pop(key, None) or deque()
        while window and now - window[0] >= 60.0:
            window.popleft()
        self._hits[key] = window  # re-inserted: dict order is least recently used first
        if len(window) >= self.per_minute:
            wait = max(1, int(60.0 - (now - window[0])) + 1)
            raise ClientError(
                "rate_limited",
                f"more than {self.per_minute} requests in a minute; wait {wait} s "
                "([gateway] requests_per_minute sets the limit)",
                429,
                {"Retry-After": str(wait)},
            )
        window.append(now)
        while len(self._hits) > self._max_keys:
            self._hits.pop(next(iter(self._hits)))

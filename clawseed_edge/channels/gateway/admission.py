"""Which TCP connections the gateway keeps: a slow or greedy client cannot starve the device.

A client that opens sockets and sends its headers a byte at a time (slowloris) held one file
descriptor each for as long as it liked: 1,100 of them exhausted the process's descriptors and
then ``/health``, ``status`` and ``estop`` (the control socket) failed too. Caps per address
were not enough either: ~1,100 rotating addresses, each under its cap, kept the total full of
idle handshakes, and every new connection (the phone's STOP among them) was refused. So each
accepted connection passes :class:`Admission` first:

* at most ``per_address`` open connections from one client (an IPv6 client by its /64: one
  home or one machine has a whole /64 to rotate through);
* the connections of all clients share ``total`` places, of which ``reserved`` are kept for
  **paired clients**: a connection whose first bytes carry a bearer token (the
  ``Authorization`` header, or ``?token=`` on a WebSocket's request line) moves to a reserved
  place at once, and leaves it again if the token turns out not to be a paired one;
* when the shared places are full, a new connection takes the place of the oldest **idle
  handshake** (a connection that has not completed a request's headers, or waits on keep-alive
  between requests) instead of being refused; only when none is idle is it refused;
* a connection whose request headers are not complete within ``header_timeout_s`` is closed;
  under pressure (the shared places more than half full) a new one has only
  ``pressure_timeout_s``.

So a flood of idle handshakes from any number of addresses only replaces itself, and a paired
phone's request (its headers take milliseconds) gets in and is not pushed out. A WebSocket keeps
its transport, so it stays counted until it closes. The descriptors the gateway can hold are
bounded well below the unit's ``LimitNOFILE``, and the control socket always finds one.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from .limits import address_group

__all__ = ["Admission", "guarded_protocol"]

log = logging.getLogger(__name__)

#: At most one "connection refused" warning in this many seconds (the rest are counted).
LOG_EVERY_S = 10.0
#: Bytes of a connection's start searched for a bearer token.
TOKEN_PEEK_BYTES = 8192
_TOKEN = re.compile(
    rb"(?:\r\nauthorization:[ \t]*bearer[ \t]+|^[A-Z]{3,7} [^ \r\n]*[?&]token=)"
    rb"([A-Za-z0-9._~+/=-]{16,256})",
    re.IGNORECASE,
)


class Connection(Protocol):
    """What :class:`Admission` asks of a connection (the guarded protocol)."""

    transport: Any

    @property
    def idle(self) -> bool:
        """No request is in progress (headers not complete yet, or between requests)."""
        ...


class Admission:
    """Open connections by client, with the places and rules of the module docstring.

    Args:
        per_address: Open connections one client (an IPv6 one by its /64) may hold.
        total: Open connections of all clients together.
        header_timeout_s: Seconds a new connection has to complete its first request's headers.
        reserved: Places of ``total`` kept for connections that carry a paired token.
        pressure_timeout_s: The header deadline of a new connection while the shared places
            are more than half full.
        verify: Whether a bearer token is a paired client's (None: nobody is paired, so no
            connection takes a reserved place).
    """

    def __init__(
        self,
        *,
        per_address: int,
        total: int,
        header_timeout_s: float,
        reserved: int = 16,
        pressure_timeout_s: float = 2.0,
        verify: Callable[[str], Awaitable[bool]] | None = None,
    ) -> None:
        self.per_address = per_address
        self.total = total
        self.reserved = max(0, min(reserved, total - 1))
        self.header_timeout_s = header_timeout_s
        self.pressure_timeout_s = min(pressure_timeout_s, header_timeout_s)
        self.verify = verify
        # Insertion order is admission order: the oldest idle handshake is found first.
        self._shared: dict[Any, Connection] = {}
        self._paired: dict[Any, Connection] = {}
        self._groups: dict[Any, str] = {}
        self._by_group: dict[str, set[Any]] = {}
        self.refused = 0
        self.timed_out = 0
        self.evicted = 0
        self._last_log = -LOG_EVERY_S
        self._unlogged = 0

    @property
    def shared_places(self) -> int:
        return self.total - self.reserved

    def open_count(self, address: str | None = None) -> int:
        """Open connections (of ``address``'s client, or of everyone)."""
        self._prune()
        if address is None:
            return len(self._shared) + len(self._paired)
        return len(self._by_group.get(address_group(address), ()))

    def under_pressure(self) -> bool:
        return len(self._shared) * 2 > self.shared_places

    def header_deadline(self) -> float:
        """Seconds a connection admitted now has to complete its headers."""
        return self.pressure_timeout_s if self.under_pressure() else self.header_timeout_s

    def admit(self, conn: Connection, address: str) -> str | None:
        """Count ``conn`` in, or say why it is refused (the caller closes it)."""
        self._prune()
        group = address_group(address)
        mine = self._by_group.get(group, set())
        if len(mine) >= self.per_address:
            return self._refuse(
                f"{group} has {self.per_address} connections open, the limit per address "
                "([gateway] max_connections_per_address)"
            )
        if len(self._shared) >= self.shared_places and not self._evict_idle():
            return self._refuse(
                f"{self.total} connections are open and none is idle, the limit "
                "([gateway] max_connections)"
            )
        transport = conn.transport
        self._shared[transport] = conn
        self._groups[transport] = group
        self._by_group.setdefault(group, set()).add(transport)
        return None

    def saw(self, conn: Connection, first_bytes: bytes) -> bool:
        """The first bytes of ``conn``: a bearer token in them moves it to a reserved place
        (checked at once in the background; a token that is not a paired one moves it back).
        True once a token was found (the caller stops looking)."""
        transport = conn.transport
        if self.verify is None or transport not in self._shared:
            return True
        match = _TOKEN.search(first_bytes)
        if match is None:
            return False
        if len(self._paired) >= self.reserved:
            return True
        self._paired[transport] = self._shared.pop(transport)
        task = asyncio.get_running_loop().create_task(self._confirm(conn, match.group(1)))
        task.add_done_callback(_log_failure)
        return True

    async def _confirm(self, conn: Connection, token: bytes) -> None:
        assert self.verify is not None
        try:
            paired = await self.verify(token.decode("ascii"))
        except Exception:
            log.exception("could not check a connection's token; it stays unreserved")
            paired = False
        transport = conn.transport
        if not paired and self._paired.pop(transport, None) is not None:
            self._shared[transport] = conn  # back among everyone's (the app answers 401)

    def late(self, address: str) -> None:
        """Note a connection closed for sending its headers too slowly."""
        self.timed_out += 1
        self._log(
            f"closed a connection from {address}: its request headers took longer than "
            f"its deadline ({self.header_timeout_s:g} s, {self.pressure_timeout_s:g} s under "
            "pressure)"
        )

    def _evict_idle(self) -> bool:
        """Close the oldest idle handshake among the shared places; False when none is idle."""
        for transport, conn in self._shared.items():
            if conn.idle:
                self._forget(transport)
                transport.abort()
                self.evicted += 1
                self._log("full: closed the oldest idle connection to let a new one in")
                return True
        return False

    def _refuse(self, reason: str) -> str:
        self.refused += 1
        self._log(f"refused a connection: {reason}")
        return reason

    def _forget(self, transport: Any) -> None:
        self._shared.pop(transport, None)
        self._paired.pop(transport, None)
        group = self._groups.pop(transport, None)
        if group is not None:
            members = self._by_group.get(group)
            if members is not None:
                members.discard(transport)
                if not members:
                    del self._by_group[group]

    def _prune(self) -> None:
        closed = [t for t in (*self._shared, *self._paired) if t.is_closing()]
        for transport in closed:
            self._forget(transport)

    def _log(self, message: str) -> None:
        now = time.monotonic()
        if now - self._last_log < LOG_EVERY_S:
            self._unlogged += 1
            return
        more = f" ({self._unlogged} more since the last line)" if self._unlogged else ""
        log.warning("%s%s", message, more)
        self._last_log, self._unlogged = now, 0


def _log_failure(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("a connection's token check failed", exc_info=task.exception())


def guarded_protocol(admission: Admission) -> type[Any]:
    """uvicorn's h11 HTTP protocol with :class:`Admission` in front of it (uvicorn ``http=``)."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class GuardedH11Protocol(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None
        _peek: bytes | None = b""
        _upgraded = False

        @property
        def idle(self) -> bool:
            if self._upgraded:
                return False
            return self.cycle is None or self.cycle.response_complete

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            address = self.client[0] if self.client else "unknown"
            if admission.admit(self, address) is not None:
                transport.abort()  # no response: a flood gets nothing to read
                return
            self._deadline = self.loop.call_later(
                admission.header_deadline(), self._headers_late, address
            )

        def data_received(self, data: bytes) -> None:
            if self._peek is not None:
                # The first bytes only: a paired client's token moves it to a reserved place.
                self._peek = (self._peek + data)[:TOKEN_PEEK_BYTES]
                found = admission.saw(self, self._peek)
                if found or b"\r\n\r\n" in self._peek or len(self._peek) >= TOKEN_PEEK_BYTES:
                    self._peek = None
            super().data_received(data)

        def _headers_late(self, address: str) -> None:
            self._deadline = None
            if self.cycle is None and not self.transport.is_closing():
                admission.late(address)
                self.transport.abort()

        def handle_websocket_upgrade(self, event: Any) -> None:
            self._cancel_deadline()  # the headers are complete
            self._upgraded = True
            super().handle_websocket_upgrade(event)

        def connection_lost(self, exc: Exception | None) -> None:
            self._cancel_deadline()
            super().connection_lost(exc)

        def _cancel_deadline(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

    return GuardedH11Protocol

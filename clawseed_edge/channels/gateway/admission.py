"""Which TCP connections the gateway keeps: a slow or greedy client cannot starve the device.

A client that opens sockets and sends its headers a byte at a time (slowloris) held one file
descriptor each for as long as it liked: 1,100 of them exhausted the process's descriptors and
then ``/health``, ``status`` and ``estop`` (the control socket) failed too. So each accepted
connection passes :class:`Admission` first:

* at most ``per_address`` open connections from one client address, and ``total`` from all
  (the rest are closed at once, with a rate-limited log line);
* a connection whose first request's headers are not complete within ``header_timeout_s`` is
  closed (uvicorn itself has no such timeout; its keep-alive timeout starts after a response).

A WebSocket keeps its transport, so it stays counted until it closes. The descriptors the
gateway can hold are thus bounded well below the unit's ``LimitNOFILE``, and the control socket
always finds one.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

__all__ = ["Admission", "guarded_protocol"]

log = logging.getLogger(__name__)

#: At most one "connection refused" warning in this many seconds (the rest are counted).
LOG_EVERY_S = 10.0


class Admission:
    """Open connections by client address, with the caps of the module docstring.

    Args:
        per_address: Open connections one client address may hold.
        total: Open connections of all clients together.
        header_timeout_s: Seconds a new connection has to complete its first request's headers.
    """

    def __init__(self, *, per_address: int, total: int, header_timeout_s: float) -> None:
        self.per_address = per_address
        self.total = total
        self.header_timeout_s = header_timeout_s
        self._by_address: dict[str, set[asyncio.BaseTransport]] = {}
        self._open: set[asyncio.BaseTransport] = set()
        self.refused = 0
        self.timed_out = 0
        self._last_log = -LOG_EVERY_S
        self._unlogged = 0

    def open_count(self, address: str | None = None) -> int:
        """Open connections (of ``address``, or of everyone)."""
        self._prune()
        if address is None:
            return len(self._open)
        return len(self._by_address.get(address, ()))

    def admit(self, transport: asyncio.BaseTransport, address: str) -> str | None:
        """Count ``transport`` in, or say why it is refused (the caller closes it)."""
        self._prune()
        mine = self._by_address.setdefault(address, set())
        if len(self._open) >= self.total:
            reason = f"{self.total} connections are open, the limit ([gateway] max_connections)"
        elif len(mine) >= self.per_address:
            reason = (
                f"{address} has {self.per_address} connections open, the limit per address "
                "([gateway] max_connections_per_address)"
            )
        else:
            mine.add(transport)
            self._open.add(transport)
            return None
        if not mine:
            del self._by_address[address]
        self.refused += 1
        self._log(f"refused a connection: {reason}")
        return reason

    def late(self, address: str) -> None:
        """Note a connection closed for sending its headers too slowly."""
        self.timed_out += 1
        self._log(
            f"closed a connection from {address}: its request headers took more than "
            f"{self.header_timeout_s:g} s"
        )

    def _prune(self) -> None:
        closed = {t for t in self._open if t.is_closing()}
        if not closed:
            return
        self._open -= closed
        for address in list(self._by_address):
            left = self._by_address[address] - closed
            if left:
                self._by_address[address] = left
            else:
                del self._by_address[address]

    def _log(self, message: str) -> None:
        now = time.monotonic()
        if now - self._last_log < LOG_EVERY_S:
            self._unlogged += 1
            return
        more = f" ({self._unlogged} more since the last line)" if self._unlogged else ""
        log.warning("%s%s", message, more)
        self._last_log, self._unlogged = now, 0


def guarded_protocol(admission: Admission) -> type[Any]:
    """uvicorn's h11 HTTP protocol with :class:`Admission` in front of it (uvicorn ``http=``)."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class GuardedH11Protocol(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            address = self.client[0] if self.client else "unknown"
            if admission.admit(transport, address) is not None:
                transport.abort()  # no response: a flood gets nothing to read
                return
            self._deadline = self.loop.call_later(
                admission.header_timeout_s, self._headers_late, address
            )

        def _headers_late(self, address: str) -> None:
            self._deadline = None
            if self.cycle is None and not self.transport.is_closing():
                admission.late(address)
                self.transport.abort()

        def handle_websocket_upgrade(self, event: Any) -> None:
            self._cancel_deadline()  # the headers are complete
            super().handle_websocket_upgrade(event)

        def connection_lost(self, exc: Exception | None) -> None:
            self._cancel_deadline()
            super().connection_lost(exc)

        def _cancel_deadline(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

    return GuardedH11Protocol

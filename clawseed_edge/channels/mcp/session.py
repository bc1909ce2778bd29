"""One MCP client's session, whatever carries it (stdio, or ``/mcp`` on the gateway).

A :class:`Session` holds what the handshake told us (revision, the client's capabilities),
who the client is (``owner``: ``stdio`` or a paired token's id) and whether its elicitation
answers may approve its own calls (``may_approve``), its requests in flight (so
``notifications/cancelled`` can stop one) and the requests the server sent it (elicitation in
the handshake era), each answered through :meth:`Session.answered`.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Awaitable, Callable
from typing import Any

from clawseed_edge.tools.mcp_wire import RpcError

__all__ = ["Send", "Session"]

#: Sends one message on the stream of the request being answered (stdio: stdout; HTTP: the
#: POST's event stream).
Send = Callable[[dict[str, Any]], Awaitable[None]]

#: Requests one session may have in flight, and server-to-client requests waiting.
MAX_IN_FLIGHT = 16
MAX_PENDING_ASKS = 8


class Session:
    """One client's state. ``notify`` sends a session-wide notification (never blocks)."""

    def __init__(
        self,
        key: str,
        owner: str,
        *,
        may_approve: bool,
        notify: Callable[[dict[str, Any]], None],
    ) -> None:
        self.key = key
        self.owner = owner
        self.may_approve = may_approve
        self.notify = notify
        self.version: str | None = None  # negotiated by initialize (handshake era)
        self.capabilities: dict[str, Any] = {}
        self.client_info: dict[str, Any] = {}
        self.tasks: dict[Any, asyncio.Task[Any]] = {}
        self.cancelled: set[Any] = set()  # ids the client cancelled, until their task ends
        self._asks: dict[int, asyncio.Future[Any]] = {}
        self._ids = itertools.count(1)

    def can_elicit(self, capabilities: dict[str, Any] | None = None) -> bool:
        """Whether the client declared form elicitation (in its handshake, or ``capabilities``
        from a 2026-era request's ``_meta``)."""
        found = self.capabilities if capabilities is None else capabilities
        return isinstance(found, dict) and isinstance(found.get("elicitation"), dict)

    async def request(
        self, send: Send, method: str, params: dict[str, Any], timeout_s: float
    ) -> Any:
        """Send the client a request on ``send`` and return its result.

        Raises:
            TimeoutError: No answer within ``timeout_s``.
            RpcError: The client answered with an error, or too many are waiting.

        Cancel-safe: the waiting request is forgotten.
        """
        if len(self._asks) >= MAX_PENDING_ASKS:
            raise RpcError(-32000, "too many questions to this client at once")
        request_id = next(self._ids)
        waiter: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._asks[request_id] = waiter
        try:
            message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
            await send(message)
            async with asyncio.timeout(timeout_s):
                return await waiter
        finally:
            self._asks.pop(request_id, None)

    def answered(self, message: dict[str, Any]) -> None:
        """A response from the client to one of :meth:`request`'s (unknown ids are ignored)."""
        waiter = self._asks.get(message.get("id"))  # type: ignore[arg-type]
        if waiter is None or waiter.done():
            return
        if "error" in message:
            failure = message.get("error") or {}
            code = failure.get("code", -32603) if isinstance(failure, dict) else -32603
            text = failure.get("message", "") if isinstance(failure, dict) else ""
            waiter.set_exception(RpcError(int(code), str(text)[:300]))
        else:
            waiter.set_result(message.get("result"))

    def cancel(self, request_id: Any) -> None:
        """``notifications/cancelled``: stop that request (it is answered no more)."""
        task = self.tasks.get(request_id)
        if task is not None and not task.done():
            self.cancelled.add(request_id)
            task.cancel()

    async def aclose(self) -> None:
        """Stop every request in flight. Idempotent."""
        for task in list(self.tasks.values()):
            task.cancel()
        for task in list(self.tasks.values()):
            with contextlib.suppress(BaseException):
                await task
        self.tasks.clear()

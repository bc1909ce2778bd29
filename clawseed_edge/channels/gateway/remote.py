"""Remote tools: a connected client's own tools (camera, location ...), callable by its agent.

A :class:`RemoteTool` is an ordinary Tool whose ``execute`` sends ``tool_call_request`` over the
client's WebSocket and waits for its ``tool_result`` / ``tool_error`` through the connection's
:class:`RemoteCalls`. A client that does not answer within the timeout fails the call with a
message saying so; a client that disconnects fails every call it still owes.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from clawseed_edge.api import BaseTool, RiskClass, ToolContext, ToolResult

from .protocol import RemoteToolSpec, ToolResultFrame

__all__ = ["RemoteCalls", "RemoteTool"]

log = logging.getLogger(__name__)


class RemoteCalls:
    """The calls one connection's client owes an answer to.

    Args:
        send: Queues a frame to the client (never blocks).
        client: Who the client is, for messages (``phone (session s1)``).
        timeout_s: How long a call waits for the client's answer.
        claim_id: Gives a call the id of its informational ``tool_call`` frame (so the
            client can match the two); None or an id already used: a fresh ``rc<n>`` id.
    """

    def __init__(
        self,
        send: Callable[[dict[str, Any]], None],
        client: str,
        timeout_s: float,
        *,
        claim_id: Callable[[str], Awaitable[str | None]] | None = None,
    ) -> None:
        self._send = send
        self._claim_id = claim_id
        self.client = client
        self.timeout_s = timeout_s
        self._pending: dict[str, asyncio.Future[ToolResult]] = {}
        self._ids = itertools.count(1)
        self._closed_reason: str | None = None

    async def call(self, name: str, arguments: Mapping[str, Any]) -> ToolResult:
        """Ask the client to run ``name`` and wait for its answer.

        Cancel-safe: a cancelled call is forgotten (a late answer is acknowledged and dropped).
        """
        if self._closed_reason is not None:
            return ToolResult.fail(
                f"remote tool {name!r} is gone: {self._closed_reason}; reconnect the client"
            )
        call_id = await self._claim_id(name) if self._claim_id is not None else None
        if not call_id or call_id in self._pending:
            call_id = f"rc{next(self._ids)}"
        fut: asyncio.Future[ToolResult] = asyncio.get_running_loop().create_future()
        self._pending[call_id] = fut
        try:
            self._send(
                {
                    "type": "tool_call_request",
                    "id": call_id,
                    "name": name,
                    "arguments": dict(arguments),
                }
            )
            async with asyncio.timeout(self.timeout_s):
                return await fut
        except TimeoutError:
            log.warning(
                "remote tool %s on %s: no answer within %g s", name, self.client, self.timeout_s
            )
            return ToolResult.fail(
                f"remote tool {name!r} on {self.client} did not answer within "
                f"{self.timeout_s:g} s; check that the client app is open and its handler "
                "returns a tool_result"
            )
        finally:
            self._pending.pop(call_id, None)

    def resolve(self, frame: ToolResultFrame) -> bool:
        """Hand the client's answer to the waiting call; False if none waits for that id."""
        fut = self._pending.get(frame.id)
        if fut is None or fut.done():
            return False
        if frame.success:
            fut.set_result(ToolResult.ok(frame.output))
        else:
            fut.set_result(ToolResult.fail(f"the client reported: {frame.error}"))
        return True

    def close(self, reason: str) -> None:
        """Fail every pending call with ``reason`` and refuse new ones."""
        self._closed_reason = reason
        for fut in self._pending.values():
            if not fut.done():
                fut.set_result(ToolResult.fail(f"the client went away ({reason})"))
        self._pending.clear()

    @property
    def pending(self) -> int:
        return len(self._pending)


class RemoteTool(BaseTool):
    """A tool run by a connected client."""

    # What a client's tool answers comes from outside the device: no auto-approval after it.
    external_content = True

    def __init__(self, spec: RemoteToolSpec, calls: RemoteCalls) -> None:
        self.name = spec.name
        self.description = spec.description or f"{spec.name} (a tool of {calls.client})"
        self.parameters = spec.parameters
        self.risk = RiskClass.READ if spec.risk == "read" else RiskClass.ACT
        # A little over the remote timeout: our message (which names the client) wins over
        # the engine's generic one.
        self.timeout_s = calls.timeout_s + 5.0
        self._calls = calls

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        return await self._calls.call(self.name, arguments)

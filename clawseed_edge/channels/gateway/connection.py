"""ChatConnection: one ``/ws/chat`` client, from ``session_start`` to cleanup.

Reading and writing are separate tasks: the reader keeps taking frames (a ``tool_result``, an
``approval_response``, an ``abort``) while a turn runs; every frame to the client goes through
a bounded outbox drained by the writer, so a slow client never blocks a turn (it is
disconnected instead). On disconnect the turn is aborted, pending remote calls fail, and the
connection's remote tools leave both registries.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import MutableMapping
from typing import TYPE_CHECKING, Any, Protocol

from clawseed_edge.agent import Remote, ToolRegistry
from clawseed_edge.api import ToolContext, ToolNameClash
from clawseed_edge.channels.approvals import ApprovalBroker
from clawseed_edge.channels.conversations import Conversations
from clawseed_edge.state import TokenInfo

from .errors import ClientError
from .limits import RateLimiter, message_key
from .protocol import (
    AbortFrame,
    ApprovalResponseFrame,
    ClientFrame,
    FrameLimits,
    MessageFrame,
    RegenerateFrame,
    RegisterToolsFrame,
    ToolResultFrame,
    error_frame,
    parse_client_frame,
    turn_event_frame,
)
from .remote import RemoteCalls, RemoteTool

if TYPE_CHECKING:
    from starlette.websockets import WebSocket

__all__ = ["ChatConnection"]

log = logging.getLogger(__name__)

#: Frames queued for a client before it counts as too slow and is disconnected.
OUTBOX = 1024
#: Seconds a turn that already sent its final frame may take to save its history at disconnect.
FINISH_S = 5.0


class ConnectionHost(Protocol):
    """What a connection needs of its gateway (the hub; the hub class is not imported)."""

    broker: ApprovalBroker
    conversations: Conversations
    registry: ToolRegistry
    limits: FrameLimits
    rate: RateLimiter
    remote_timeout_s: float

    @property
    def connections(self) -> MutableMapping[str, Any]: ...


class ChatConnection:
    """One WebSocket client of ``/ws/chat``; :meth:`serve` runs it to the end."""

    def __init__(
        self,
        hub: ConnectionHost,
        websocket: WebSocket,
        who: TokenInfo,
        session_id: str,
        *,
        resumed: bool,
        message_count: int,
        title: str,
        answers_approvals: bool = True,
    ) -> None:
        self.hub = hub
        self.websocket = websocket
        self.who = who
        self.session_id = session_id
        self.resumed = resumed
        self.message_count = message_count
        self.title = title
        self.answers_approvals = answers_approvals
        self.source = Remote(session_id)
        self.outbox: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue(OUTBOX)
        self.calls = RemoteCalls(
            self.send, f"{who.name} (session {session_id})", hub.remote_timeout_s
        )
        # The conversation's agent is built from the service's assembled parts; the client's
        # remote tools (remote_names) are trusted in its own session only.
        self.conversation = hub.conversations.open("gateway", who.name, session_id)
        self.agent = self.conversation.agent
        self.remote_names: set[str] = self.conversation.own_tools
        self.turn: asyncio.Task[None] | None = None
        self.last_message: str | None = None
        self._final_sent = False
        self._closing: str | None = None
        self._writer: asyncio.Task[None] | None = None
        self._done = asyncio.Event()

    # --- sending -------------------------------------------------------------------------

    def send(self, frame: dict[str, Any]) -> None:
        """Queue a frame for the client; never blocks (a client that falls
        :data:`OUTBOX` frames behind is disconnected)."""
        if self._closing is not None:
            return
        try:
            self.outbox.put_nowait(frame)
        except asyncio.QueueFull:
            log.warning("client %s is too slow to read; disconnecting it", self.who.name)
            self._closing = "the client did not read its frames"
            if self._writer is not None:
                self._writer.cancel()

    async def _write(self) -> None:
        while (frame := await self.outbox.get()) is not None:
            await self.websocket.send_text(json.dumps(frame, ensure_ascii=False, default=str))

    # --- lifecycle -----------------------------------------------------------------------

    async def serve(self) -> None:
        """Run the connection until the client leaves or the gateway closes it.

        Cancel-safe: cleanup (abort the turn, fail remote calls, remove remote tools) runs in
        ``finally``.
        """
        writer = self._writer = asyncio.create_task(
            self._write(), name=f"ws-writer-{self.session_id}"
        )
        try:
            self.send(
                {
                    "type": "session_start",
                    "sessionId": self.session_id,
                    "name": self.title,
                    "resumed": self.resumed,
                    "messageCount": self.message_count,
                }
            )
            self.send({"type": "connected", "sessionId": self.session_id})
            # Approval requests already waiting reach a client that connects while they wait.
            for frame in self.hub.broker.waiting_frames():
                self.send(frame)
            reader = asyncio.create_task(self._read(), name=f"ws-reader-{self.session_id}")
            done, _ = await asyncio.wait({reader, writer}, return_when=asyncio.FIRST_COMPLETED)
            for task in (reader, writer):
                if task not in done:
                    task.cancel()
            await asyncio.gather(reader, writer, return_exceptions=True)
        finally:
            writer.cancel()
            await self._cleanup(self._closing or "the client disconnected")
            with contextlib.suppress(Exception):
                await self.websocket.close(code=1001)
            self._done.set()

    async def _read(self) -> None:
        while self._closing is None:
            message = await self.websocket.receive()
            if message["type"] == "websocket.disconnect":
                return
            raw = message.get("text")
            if raw is None:
                raw = message.get("bytes") or b""
            try:
                self._handle(parse_client_frame(raw, self.hub.limits))
            except ClientError as exc:
                # Debug only: a misbehaving client must not be able to flood the service log.
                log.debug(
                    "client %s sent a refused frame (%d bytes): %s",
                    self.who.name,
                    len(raw),
                    exc.code,
                )
                self.send(error_frame(exc.code, str(exc)))

    async def close(self, reason: str, *, grace_s: float = 0.0) -> None:
        """Finish (within ``grace_s``) or abort the running turn, then close the socket.

        Cancel-safe.
        """
        if self.turn is not None and not self.turn.done() and grace_s > 0:
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                async with asyncio.timeout(grace_s):
                    await asyncio.shield(self.turn)
        self.send(error_frame("closing", reason))
        self.agent.abort(self.session_id, reason)
        with contextlib.suppress(asyncio.QueueFull):
            self.outbox.put_nowait(None)  # the writer sends what is queued, then stops
        if self._closing is None:
            self._closing = reason
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(5.0):
                await self._done.wait()

    async def _cleanup(self, reason: str) -> None:
        self._closing = self._closing or reason
        turn = self.turn
        if turn is not None and not turn.done() and self._final_sent:
            # The client has its answer; the turn is saving history (and memory upkeep).
            # Let it, so a client that leaves right after 'done' can resume the conversation.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(FINISH_S):
                    await asyncio.shield(turn)
        if turn is not None and not turn.done():
            self.agent.abort(self.session_id, reason)
            turn.cancel()
            await asyncio.gather(turn, return_exceptions=True)
        self.calls.close(reason)
        self._drop_remote_tools()
        if self.hub.connections.get(self.session_id) is self:
            del self.hub.connections[self.session_id]
        self.hub.conversations.close(self.conversation)
        log.info("client %s left session %s: %s", self.who.name, self.session_id, reason)

    # --- frames --------------------------------------------------------------------------

    def _handle(self, frame: ClientFrame) -> None:
        if isinstance(frame, MessageFrame | RegenerateFrame):
            self.hub.rate.hit(message_key(self.who.id))  # a refusal is an error frame
        if isinstance(frame, MessageFrame):
            self._start_turn(frame.content)
        elif isinstance(frame, RegisterToolsFrame):
            self._register(frame)
        elif isinstance(frame, ToolResultFrame):
            if self.calls.resolve(frame):
                self.send({"type": "result_acknowledged", "id": frame.id})
            else:
                self.send(
                    error_frame(
                        "tool_result_unexpected",
                        f"no tool_call_request {frame.id!r} is waiting (answered already, timed "
                        "out, or never sent); answer only requests you received",
                    )
                )
        elif isinstance(frame, AbortFrame):
            if not self.agent.abort(self.session_id, "aborted by the client"):
                self.send(error_frame("no_turn", "no turn is running; nothing to abort"))
        elif isinstance(frame, RegenerateFrame):
            if self.last_message is None:
                self.send(
                    error_frame(
                        "nothing_to_regenerate",
                        "no message was sent on this connection yet; send a message first",
                    )
                )
            else:
                self._start_turn(self.last_message, regenerate=True)
        elif isinstance(frame, ApprovalResponseFrame):
            if not self.hub.broker.resolve(
                frame.id, frame.approved, frame.reason, by=self.who.name
            ):
                self.send(
                    error_frame(
                        "approval_unknown",
                        f"approval {frame.id!r} is not waiting (answered by another client, timed "
                        "out, or unknown)",
                    )
                )

    def _start_turn(self, text: str, *, regenerate: bool = False) -> None:
        previous = self.turn
        if previous is not None and not previous.done() and not self._final_sent:
            self.send(
                error_frame(
                    "turn_busy", "a turn is still running; wait for 'done' or send 'abort' first"
                )
            )
            return
        self.last_message = text
        self._final_sent = False
        if regenerate:
            self.send({"type": "chunk_reset"})
        self.turn = asyncio.create_task(
            self._run_turn(text, previous), name=f"turn-{self.session_id}"
        )

    async def _run_turn(self, text: str, previous: asyncio.Task[None] | None) -> None:
        if previous is not None:
            # The client already has the previous turn's 'done'; that turn is only saving its
            # history. Start after it, so the new turn sees it.
            await asyncio.gather(previous, return_exceptions=True)
        context = ToolContext(session_id=self.session_id, channel="gateway")
        try:
            async with contextlib.aclosing(
                self.agent.turn(text, session_id=self.session_id, context=context)
            ) as events:
                async for event in events:
                    frame = turn_event_frame(event)
                    if frame is not None:
                        if frame["type"] in ("done", "aborted", "error"):
                            self._final_sent = True
                        self.send(frame)
        except Exception as exc:  # a bug must not leave the client waiting for 'done'
            log.exception("turn of session %s failed", self.session_id)
            self.send(error_frame("internal_error", f"the turn failed: {exc}"))

    # --- remote tools --------------------------------------------------------------------

    def _register(self, frame: RegisterToolsFrame) -> None:
        # A new list replaces the previous one (a client re-registers after reconnecting).
        self._drop_remote_tools()
        registered: list[str] = []
        rejected: list[dict[str, str]] = []
        for spec in frame.tools:
            tool = RemoteTool(spec, self.calls)
            try:
                if not self.hub.registry.register(tool, self.source):
                    rejected.append({"name": spec.name, "reason": "denied by [tools] filters"})
                    continue
            except ToolNameClash:
                rejected.append(
                    {
                        "name": spec.name,
                        "reason": "the name is taken by another tool; rename it on the client",
                    }
                )
                continue
            self.agent.registry.register(tool, self.source)
            self.remote_names.add(spec.name)
            registered.append(spec.name)
        reply: dict[str, Any] = {
            "type": "tools_registered",
            "count": len(registered),
            "registered": registered,
        }
        if rejected:
            reply["rejected"] = rejected
        self.send(reply)
        if rejected:
            names = ", ".join(r["name"] for r in rejected)
            self.send(
                error_frame(
                    "tools_rejected",
                    f"not registered: {names} (see 'rejected' in tools_registered)",
                )
            )

    def _drop_remote_tools(self) -> None:
        self.hub.registry.unregister_by_source(self.source)
        self.agent.registry.unregister_by_source(self.source)
        self.remote_names.clear()

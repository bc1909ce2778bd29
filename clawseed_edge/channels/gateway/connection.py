"""ChatConnection: one ``/ws/chat`` client, from ``session_start`` to cleanup.

Reading and writing are separate tasks: the reader keeps taking frames (a ``tool_result``, an
``approval_response``, an ``abort``) while a turn runs; every frame to the client goes through
a bounded outbox drained by the writer, so a slow client never blocks a turn (it is
disconnected instead). On disconnect pending remote calls fail and the connection's remote
tools leave its registry, but a running turn is not aborted: it finishes detached, and what it
sends from then on goes to the connection that resumes the session (``?session_id=``), or
waits for it (:class:`DetachedTurns`). Only a close by the gateway (shutdown, revoke) aborts.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import MutableMapping
from typing import TYPE_CHECKING, Any, Protocol

from clawseed_edge.agent import Remote, ToolRegistry
from clawseed_edge.api import SessionStore, ToolContext, ToolNameClash
from clawseed_edge.channels.approvals import ApprovalBroker
from clawseed_edge.channels.conversations import Conversations
from clawseed_edge.state import TokenInfo

from .detached import FINAL_TYPES, DetachedTurns
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
    detached: DetachedTurns

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
        answers_approvals: bool = False,
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
            self.send,
            f"{who.name} (session {session_id})",
            hub.remote_timeout_s,
            claim_id=self._claim_call_id,
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
        self._detached = False
        self._abort_turn = False  # closed by the gateway (shutdown, revoke): the turn ends too
        self._writer: asyncio.Task[None] | None = None
        self._done = asyncio.Event()
        # Ids of the informational tool_call frames, unique per connection and turn; a remote
        # call's tool_call_request carries the id of its tool_call frame.
        self._turns = 0
        self._calls_in_turn = 0
        self._frame_ids: dict[str, str] = {}
        self._remote_ids: dict[str, list[str]] = {}
        self._id_ready = asyncio.Event()

    # --- sending -------------------------------------------------------------------------

    def send(self, frame: dict[str, Any]) -> None:
        """Queue a frame for the client; never blocks (a client that falls
        :data:`OUTBOX` frames behind is disconnected). Once the client is gone, the frames of
        a turn that goes on reach the connection that resumed the session, or wait for it."""
        if self._detached:
            live = self.hub.connections.get(self.session_id)
            if live is not None and live is not self:
                live.send(frame)
                if frame.get("type") in FINAL_TYPES:
                    live.detached_turn_ended()
            elif frame.get("type") not in ("error",) or frame.get("code") not in ("closing",):
                self.hub.detached.keep(self.session_id, frame)
            return
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
            # A turn of this session that lost its client: what it sent, then the rest live.
            for frame in self.hub.detached.take(self.session_id):
                self.send(frame)
            running = self.hub.detached.running.get(self.session_id)
            if running is not None and not running[0].done():
                self.turn = running[0]
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

    def detached_turn_ended(self) -> None:
        """The detached turn this connection took over sent its final frame."""
        self._final_sent = True

    async def close(self, reason: str, *, grace_s: float = 0.0, keep_turn: bool = False) -> None:
        """Finish (within ``grace_s``) or abort the running turn, then close the socket.

        ``keep_turn``: the session moves to another connection (a phone that reconnected);
        the turn goes on there instead of being aborted. Cancel-safe.
        """
        if self.turn is not None and not self.turn.done() and grace_s > 0:
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                async with asyncio.timeout(grace_s):
                    await asyncio.shield(self.turn)
        self.send(error_frame("closing", reason))
        if not keep_turn:
            self._abort_turn = True
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
        if turn is not None and not turn.done() and self._abort_turn:
            turn.cancel()
            await asyncio.gather(turn, return_exceptions=True)
        self.calls.close(reason)
        self._drop_remote_tools()
        if self.hub.connections.get(self.session_id) is self:
            del self.hub.connections[self.session_id]
        if turn is not None and not turn.done():
            # The client went away, not the question: the turn finishes (a relay may be
            # switching) and its answer waits for the client that resumes the session.
            self._detach(turn)
        else:
            self.hub.conversations.close(self.conversation)
        log.info("client %s left session %s: %s", self.who.name, self.session_id, reason)

    def _detach(self, turn: asyncio.Task[None]) -> None:
        self._detached = True
        running = self.hub.detached.running
        running[self.session_id] = (turn, self.agent)

        def finished(_: asyncio.Task[None]) -> None:
            if running.get(self.session_id, (None,))[0] is turn:
                del running[self.session_id]
            self.hub.conversations.close(self.conversation)

        turn.add_done_callback(finished)
        log.info("the turn of session %s goes on without its client", self.session_id)

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
        self._turns += 1
        self._calls_in_turn = 0
        self._frame_ids.clear()
        self._remote_ids.clear()
        if regenerate:
            self.send({"type": "chunk_reset"})
        self.turn = asyncio.create_task(
            self._run_turn(text, previous, regenerate=regenerate), name=f"turn-{self.session_id}"
        )

    async def _run_turn(
        self, text: str, previous: asyncio.Task[None] | None, *, regenerate: bool = False
    ) -> None:
        if previous is not None:
            # The client already has the previous turn's 'done'; that turn is only saving its
            # history. Start after it, so the new turn sees it.
            await asyncio.gather(previous, return_exceptions=True)
        if regenerate:
            await self._forget_last_exchange()
        context = ToolContext(session_id=self.session_id, channel="gateway")
        try:
            async with contextlib.aclosing(
                self.agent.turn(text, session_id=self.session_id, context=context)
            ) as events:
                async for event in events:
                    frame = turn_event_frame(event)
                    if frame is not None:
                        self._number(frame)
                        if frame["type"] in ("done", "aborted", "error"):
                            self._final_sent = True
                        self.send(frame)
        except Exception as exc:  # a bug must not leave the client waiting for 'done'
            log.exception("turn of session %s failed", self.session_id)
            self.send(error_frame("internal_error", f"the turn failed: {exc}"))

    async def _forget_last_exchange(self) -> None:
        """Drop the last message and its answer from the stored history, so a regenerated
        answer replaces the old one (the model must not see both). Without a session store
        the old answer stays; a store that fails is logged and the turn goes on."""
        store = self.agent.session_store
        if not isinstance(store, SessionStore):
            return
        try:
            history = await store.load_history(self.session_id)
            last_user = max((i for i, m in enumerate(history) if m.role == "user"), default=None)
            if last_user is None:
                return
            await store.delete_session(self.session_id)
            if last_user:
                await store.append_history(self.session_id, history[:last_user])
        except Exception:
            log.warning(
                "could not drop the old answer of session %s before regenerating",
                self.session_id,
                exc_info=True,
            )
        # The agent reads the session again from the store at the next turn.
        self.agent.reset(self.session_id)

    # --- call ids ------------------------------------------------------------------------

    def _number(self, frame: dict[str, Any]) -> None:
        """Give a tool_call frame an id unique in the turn (the engine's ids repeat from one
        model response to the next), its tool_result the same id, and a remote call the id
        of its tool_call frame."""
        if frame["type"] == "tool_call":
            self._calls_in_turn += 1
            frame_id = f"t{self._turns}.{self._calls_in_turn}"
            self._frame_ids[str(frame["id"])] = frame_id
            if frame["name"] in self.remote_names:
                self._remote_ids.setdefault(frame["name"], []).append(frame_id)
                self._id_ready.set()
            frame["id"] = frame_id
        elif frame["type"] == "tool_result":
            frame_id = self._frame_ids.pop(str(frame["id"]), str(frame["id"]))
            waiting = self._remote_ids.get(frame["name"], [])
            if frame_id in waiting:  # refused before it ran: no request will claim it
                waiting.remove(frame_id)
            frame["id"] = frame_id

    async def _claim_call_id(self, name: str) -> str | None:
        """The id of the tool_call frame of the remote call of ``name`` about to run (its
        event reaches this connection a moment after the call starts); None if it does not
        come (the call then gets an id of its own)."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(1.0):
                while not self._remote_ids.get(name):
                    self._id_ready.clear()
                    await self._id_ready.wait()
        waiting = self._remote_ids.get(name)
        return waiting.pop(0) if waiting else None

    # --- remote tools --------------------------------------------------------------------

    def _register(self, frame: RegisterToolsFrame) -> None:
        # A new list replaces the previous one (a client re-registers after reconnecting).
        # Remote tools live in this connection's registry only: another session may offer
        # tools of the same names (the same app on a second phone), a built-in's name is taken.
        self._drop_remote_tools()
        registered: list[str] = []
        rejected: list[dict[str, str]] = [dict(r) for r in frame.rejected]
        for spec in frame.tools:
            tool = RemoteTool(spec, self.calls)
            try:
                if not self.agent.registry.register(tool, self.source):
                    rejected.append({"name": spec.name, "reason": "denied by [tools] filters"})
                    continue
            except ToolNameClash:
                rejected.append(
                    {
                        "name": spec.name,
                        "reason": "the name is taken by a tool of the device; rename it on the "
                        "client",
                    }
                )
                continue
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
        self.agent.registry.unregister_by_source(self.source)
        self.remote_names.clear()

    def remote_tools(self) -> list[dict[str, Any]]:
        """This client's tools, as ``/api/tools`` lists them."""
        return self.agent.registry.listing(self.remote_names)

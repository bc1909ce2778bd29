"""MCP over streamable HTTP: the ASGI app the gateway mounts at ``/mcp`` (behind its tokens).

* ``POST``: one JSON-RPC message. A request is answered with JSON, or (``tools/call``, when the
  client accepts it) with an event stream that carries the call's elicitation and progress
  before its answer; a notification or a response gets 202.
* Handshake era: ``initialize`` opens a session (``Mcp-Session-Id``), capped per paired client
  and in total, ended by ``DELETE`` or after :data:`SESSION_IDLE_S` without a request; ``GET``
  opens the session's notification stream (resources/updated). A session belongs to the token
  that opened it: another token gets 404.
* 2026 era (``_meta`` names the revision): no session; every POST stands alone.

A paired client's elicitation answers approve its own calls only when ``[mcp] approvers`` names
it; for every other client the approval goes to a person on another channel (the approvals
broker: the phones, Telegram).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Sequence
from typing import Any

from clawseed_edge.tools import mcp_wire as wire

from .backend import ToolBackend
from .handlers import McpServer
from .session import Session

__all__ = ["MAX_MESSAGE_BYTES", "McpHttp"]

log = logging.getLogger(__name__)

#: The largest POST body, sessions per paired client and in all, and how long an idle session
#: (no request, no open stream) lives.
MAX_MESSAGE_BYTES = 1 << 20
MAX_SESSIONS_PER_OWNER = 8
MAX_SESSIONS = 64
SESSION_IDLE_S = 1800.0
#: Messages waiting on one event stream; more are dropped (a slow client loses updates).
MAX_STREAM_QUEUE = 32
SESSION_HEADER = "mcp-session-id"
VERSION_HEADER = "mcp-protocol-version"


class _HttpSession:
    """A handshake-era session on ``/mcp``: its :class:`Session` and notification stream."""

    def __init__(self, key: str, owner: str, may_approve: bool) -> None:
        self.queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue(MAX_STREAM_QUEUE)
        self.session = Session(key, owner, may_approve=may_approve, notify=self._notify)
        self.streaming = False
        self.used_at = asyncio.get_running_loop().time()

    def _notify(self, message: dict[str, Any]) -> None:
        with contextlib.suppress(asyncio.QueueFull):
            self.queue.put_nowait(message)


class McpHttp:
    """The MCP server as streamable HTTP.

    Args:
        backend: What is served.
        approvers: Paired clients (by the name they paired with, or their id) whose
            elicitation answers may approve their own calls (``[mcp] approvers``).
    """

    def __init__(self, backend: ToolBackend, approvers: Sequence[str] = ()) -> None:
        self.server = McpServer(backend)
        self.approvers = frozenset(approvers)
        self.sessions: dict[str, _HttpSession] = {}

    async def start(self) -> None:
        """Nothing to start (kept for the service's start-up order)."""

    async def aclose(self) -> None:
        """End every session. Idempotent."""
        for key in list(self.sessions):
            await self._end(key)

    # --- ASGI ------------------------------------------------------------------------------

    async def app(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        owner, may_approve = self._who(scope)
        self._sweep()
        method = scope["method"]
        if method == "POST":
            await self._post(headers, owner, may_approve, receive, send)
        elif method == "GET":
            await self._get(headers, owner, receive, send)
        elif method == "DELETE":
            found = self._session(headers, owner)
            if isinstance(found, _HttpSession):
                await self._end(found.session.key)
                await _plain(send, 200, b"")
            else:
                await _plain(send, *found)
        else:
            await _plain(send, 405, b"use POST, GET or DELETE", [(b"allow", b"POST, GET, DELETE")])

    def _who(self, scope: Any) -> tuple[str, bool]:
        """The paired client (the gateway's TokenGate put it in the scope) and whether it may
        approve its own calls."""
        info = scope.get("clawseed.client")
        if info is None:
            return "unpaired", False
        ident, name = str(getattr(info, "id", "")), str(getattr(info, "name", ""))
        return f"token:{ident}", bool(self.approvers & {ident, name})

    def _sweep(self) -> None:
        now = asyncio.get_running_loop().time()
        for key, held in list(self.sessions.items()):
            if (
                not held.streaming
                and not held.session.tasks
                and now - held.used_at > SESSION_IDLE_S
            ):
                self.sessions.pop(key, None)
                self.server.ended(held.session)

    async def _end(self, key: str) -> None:
        held = self.sessions.pop(key, None)
        if held is not None:
            self.server.ended(held.session)
            await held.session.aclose()

    def _session(self, headers: dict[str, str], owner: str) -> _HttpSession | tuple[int, bytes]:
        key = headers.get(SESSION_HEADER)
        if not key:
            return 400, b"send initialize first, then the Mcp-Session-Id it answered"
        held = self.sessions.get(key[:100])
        if held is None or held.session.owner != owner:
            return 404, b"no such session (it ended or expired): initialize again"
        held.used_at = asyncio.get_running_loop().time()
        return held

    # --- POST ------------------------------------------------------------------------------

    async def _post(
        self, headers: dict[str, str], owner: str, may_approve: bool, receive: Any, send: Any
    ) -> None:
        body = await _body(receive, MAX_MESSAGE_BYTES)
        if body is None:
            await _json(
                send,
                413,
                wire.error(
                    None, wire.INVALID_REQUEST, f"the message is over {MAX_MESSAGE_BYTES} bytes"
                ),
            )
            return
        try:
            message = wire.decode(body)
        except wire.RpcError as exc:
            await _json(send, 400, wire.error(None, exc.rpc_code, str(exc)))
            return
        if not isinstance(message, dict):
            await _json(
                send,
                400,
                wire.error(None, wire.INVALID_REQUEST, "send one JSON-RPC message (no batches)"),
            )
            return
        version = headers.get(VERSION_HEADER)
        if version and version not in (*wire.HANDSHAKE_VERSIONS, *wire.MODERN_VERSIONS):
            await _plain(send, 400, f"unsupported MCP-Protocol-Version {version[:40]!r}".encode())
            return
        if (
            wire.request_version(message.get("params")) is not None
            or version in wire.MODERN_VERSIONS
        ):
            # 2026 era: no session; this request alone
            session = Session(
                f"once:{secrets.token_hex(8)}", owner, may_approve=may_approve, notify=_drop
            )
            extra: list[tuple[bytes, bytes]] = []
        elif message.get("method") == "initialize":
            opened = self._open(owner, may_approve)
            if isinstance(opened, tuple):
                await _json(send, opened[0], wire.error(message.get("id"), -32000, opened[1]))
                return
            session = opened.session
            extra = [(SESSION_HEADER.encode(), session.key.encode())]
        else:
            found = self._session(headers, owner)
            if not isinstance(found, _HttpSession):
                await _plain(send, *found)
                return
            session, extra = found.session, []
        if "method" not in message or "id" not in message:
            await self.server.handle(session, message, _no_stream)
            await _plain(send, 202, b"", extra)
            return
        if message.get("method") == "tools/call" and "text/event-stream" in headers.get(
            "accept", ""
        ):
            await self._streamed(session, message, send, extra)
            return
        answer = await self.server.handle(session, message, _no_stream)
        await _json(send, 200, answer or {}, extra)

    def _open(self, owner: str, may_approve: bool) -> _HttpSession | tuple[int, str]:
        if len(self.sessions) >= MAX_SESSIONS:
            return 503, f"at most {MAX_SESSIONS} MCP sessions at once; close one (DELETE /mcp)"
        if (
            sum(1 for s in self.sessions.values() if s.session.owner == owner)
            >= MAX_SESSIONS_PER_OWNER
        ):
            return (
                429,
                f"at most {MAX_SESSIONS_PER_OWNER} MCP sessions per paired client; close one",
            )
        key = secrets.token_hex(16)
        held = _HttpSession(key, owner, may_approve)
        self.sessions[key] = held
        return held

    async def _streamed(
        self, session: Session, message: dict[str, Any], send: Any, extra: list[tuple[bytes, bytes]]
    ) -> None:
        """Answer on an event stream: the call's questions and progress, then its result."""
        await send({"type": "http.response.start", "status": 200, "headers": _sse_headers(extra)})

        async def on_stream(outgoing: dict[str, Any]) -> None:
            await send({"type": "http.response.body", "body": _event(outgoing), "more_body": True})

        answer = await self.server.handle(session, message, on_stream)
        body = _event(answer) if answer is not None else b""
        await send({"type": "http.response.body", "body": body, "more_body": False})

    # --- GET -------------------------------------------------------------------------------

    async def _get(self, headers: dict[str, str], owner: str, receive: Any, send: Any) -> None:
        if "text/event-stream" not in headers.get("accept", ""):
            await _plain(send, 406, b"GET /mcp is an event stream: accept text/event-stream")
            return
        found = self._session(headers, owner)
        if not isinstance(found, _HttpSession):
            await _plain(send, *found)
            return
        if found.streaming:
            await _plain(send, 409, b"this session already has its stream open")
            return
        found.streaming = True
        await send({"type": "http.response.start", "status": 200, "headers": _sse_headers([])})
        gone = asyncio.ensure_future(_disconnected(receive))
        try:
            while found.session.key in self.sessions:
                waiting = asyncio.ensure_future(found.queue.get())
                done, _ = await asyncio.wait({waiting, gone}, return_when=asyncio.FIRST_COMPLETED)
                if waiting not in done:
                    waiting.cancel()
                    break
                await send(
                    {
                        "type": "http.response.body",
                        "body": _event(waiting.result()),
                        "more_body": True,
                    }
                )
        finally:
            found.streaming = False
            gone.cancel()
            with contextlib.suppress(Exception):
                await send({"type": "http.response.body", "body": b"", "more_body": False})


async def _no_stream(message: dict[str, Any]) -> None:
    """A JSON answer has no stream: nothing can be sent before it (no elicitation, no
    progress)."""
    raise wire.RpcError(-32000, "this request has no event stream to ask on")


def _drop(message: dict[str, Any]) -> None:
    """A 2026-era request has no session stream: its notifications go nowhere."""


async def _disconnected(receive: Any) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def _body(receive: Any, cap: int) -> bytes | None:
    """The request body, or None when it is over ``cap`` (reading stops there)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        event = await receive()
        if event["type"] == "http.disconnect":
            return b""
        chunk = event.get("body", b"")
        size += len(chunk)
        if size > cap:
            return None
        chunks.append(chunk)
        if not event.get("more_body"):
            return b"".join(chunks)


def _event(message: dict[str, Any]) -> bytes:
    return b"event: message\ndata: " + wire.encode(message) + b"\n\n"


def _sse_headers(extra: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    return [
        (b"content-type", b"text/event-stream"),
        (b"cache-control", b"no-cache, no-transform"),
        (b"x-accel-buffering", b"no"),
        *extra,
    ]


async def _json(
    send: Any, status: int, message: dict[str, Any], extra: Sequence[tuple[bytes, bytes]] = ()
) -> None:
    body = wire.encode(message)
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        *extra,
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _plain(
    send: Any, status: int, text: bytes, extra: Sequence[tuple[bytes, bytes]] = ()
) -> None:
    headers = [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(text)).encode()),
        *extra,
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": text})

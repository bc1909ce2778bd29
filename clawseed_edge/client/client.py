"""GatewayClient: one WebSocket session with the gateway's ``/ws/chat``."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import logging
import random
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

from .errors import ClientConnectionError, PairingFailed, TurnFailed, TurnLost

__all__ = ["GatewayClient", "RemoteToolHandler", "TurnFailed", "pair"]

log = logging.getLogger(__name__)

#: ``handler(arguments)`` returns the tool's output text (or raises to report a failure).
RemoteToolHandler = Callable[[Mapping[str, Any]], Awaitable[Any] | Any]
#: ``handler(request)`` answers an ``approval_request`` frame: True approves. A plain function
#: runs on a worker thread (it may block, e.g. on ``input()``); a coroutine function on the loop.
ApprovalHandler = Callable[[dict[str, Any]], Awaitable[bool] | bool]

_END_TYPES = ("done", "error", "aborted")


async def pair(base_url: str, code: str, *, name: str = "python", timeout_s: float = 10.0) -> str:
    """Trade the device's one-time pairing code for a bearer token.

    Raises:
        PairingFailed: The code was wrong or used, or this client is locked out (the message
            is the gateway's, with what to do).
        ClientConnectionError: The gateway cannot be reached.

    Cancel-safe.
    """
    import httpx

    try:
        async with httpx.AsyncClient(base_url=base_url, timeout=timeout_s) as http:
            response = await http.post(
                "/pair", headers={"X-Pairing-Code": code, "X-Client-Name": name}
            )
    except httpx.HTTPError as exc:
        raise ClientConnectionError(f"cannot reach the gateway at {base_url}: {exc}") from exc
    body = _json(response.content)
    if response.status_code != 200:
        error = body.get("error", {}) if isinstance(body, dict) else {}
        raise PairingFailed(str(error.get("message", f"pairing failed ({response.status_code})")))
    return str(body["token"])


def _json(raw: bytes | str) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return {}


@dataclass(slots=True)
class _Tool:
    name: str
    description: str
    parameters: dict[str, Any]
    risk: str
    handler: RemoteToolHandler


class GatewayClient:
    """A chat session with the gateway.

    Args:
        base_url: ``http://host:port`` of the gateway.
        token: The bearer token from :func:`pair` (None when the gateway runs without pairing).
        session_id: Resume this session; None lets the gateway make one (kept for reconnects).
        reconnect: Reconnect with backoff when the connection drops, resuming the session.
        backoff_s: First and largest wait between reconnect attempts, in seconds.
        max_reconnects: Give up after this many failed attempts in a row.
        on_approval: Answers approval requests (True approves): a coroutine function, or a plain
            function, which runs on a worker thread so it may block (``input()``). None leaves
            them to :meth:`events` readers, who answer with :meth:`approve`; :meth:`ask`, which
            reads the frames itself, declines them at once (and logs it) rather than let the
            turn wait for an answer that cannot come.
        max_queue: Frames buffered for :meth:`events` before the oldest is dropped.
    """

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None = None,
        session_id: str | None = None,
        reconnect: bool = True,
        backoff_s: tuple[float, float] = (0.2, 5.0),
        max_reconnects: int = 8,
        on_approval: ApprovalHandler | None = None,
        max_queue: int = 1024,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.session_id = session_id
        self.reconnect = reconnect
        self.backoff_s = backoff_s
        self.max_reconnects = max_reconnects
        self.on_approval = on_approval
        self.session: dict[str, Any] = {}
        self.registered: list[str] = []
        self.connections = 0
        self._tools: dict[str, _Tool] = {}
        self._events: asyncio.Queue[dict[str, Any]] = asyncio.Queue(max_queue)
        self._ws: Any = None
        self._reader: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self._closed = False
        self._handlers: set[asyncio.Task[None]] = set()
        # Connections lost so far: ask() tells a drop during its turn from an older one.
        self._drops = 0

    # --- tools ---------------------------------------------------------------------------

    def tool(
        self,
        name: str,
        description: str = "",
        parameters: Mapping[str, Any] | None = None,
        *,
        risk: str = "read",
    ) -> Callable[[RemoteToolHandler], RemoteToolHandler]:
        """Decorator: offer ``handler`` as a tool (registered on every (re)connect)."""

        def register(handler: RemoteToolHandler) -> RemoteToolHandler:
            self.add_tool(name, handler, description, parameters, risk=risk)
            return handler

        return register

    def add_tool(
        self,
        name: str,
        handler: RemoteToolHandler,
        description: str = "",
        parameters: Mapping[str, Any] | None = None,
        *,
        risk: str = "read",
    ) -> None:
        """Offer a tool; ``risk`` is ``read`` (looks only) or ``act`` (changes something)."""
        schema = dict(parameters or {"type": "object", "properties": {}})
        self._tools[name] = _Tool(name, description, schema, risk, handler)

    # --- connection ----------------------------------------------------------------------

    def _ws_url(self) -> str:
        parts = urlsplit(self.base_url)
        scheme = "wss" if parts.scheme == "https" else "ws"
        # The client always answers approval requests (its handler, or a decline when it has
        # none), so it declares it: a client that does not is never waited for.
        query = ["approvals=1"]
        if self.session_id:
            query.append(f"session_id={quote(self.session_id)}")
        return urlunsplit((scheme, parts.netloc, "/ws/chat", "&".join(query), ""))

    async def connect(self, timeout_s: float = 10.0) -> dict[str, Any]:
        """Open the session, register the tools; returns the ``session_start`` frame.

        Raises:
            ClientConnectionError: The gateway cannot be reached or refused the connection
                (the message is the gateway's, e.g. an unknown token).

        Cancel-safe.
        """
        await self._open(timeout_s)
        self._reader = asyncio.create_task(self._read_loop(), name="gateway-client-reader")
        return self.session

    async def _open(self, timeout_s: float) -> None:
        from websockets.asyncio.client import connect
        from websockets.exceptions import WebSocketException

        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        self._ready.clear()
        try:
            async with asyncio.timeout(timeout_s):
                ws = await connect(
                    self._ws_url(),
                    additional_headers=headers,
                    max_size=4 << 20,
                    open_timeout=timeout_s,
                )
                first = _json(await ws.recv())
                if first.get("type") == "error":
                    await ws.close()
                    raise ClientConnectionError(
                        f"the gateway refused the connection: {first.get('message')}"
                    )
                self.session = first
                self.session_id = str(first.get("sessionId") or self.session_id or "")
                self._ws = ws
                self.connections += 1
                if self._tools:
                    await self._send(
                        {
                            "type": "register_tools",
                            "tools": [
                                {
                                    "name": t.name,
                                    "description": t.description,
                                    "parameters": t.parameters,
                                    "risk": t.risk,
                                }
                                for t in self._tools.values()
                            ],
                        }
                    )
                    while True:  # wait for the confirmation so tools are callable on return
                        frame = _json(await ws.recv())
                        if frame.get("type") == "tools_registered":
                            self.registered = list(frame.get("registered", []))
                            break
                        self._dispatch(frame)
        except (OSError, TimeoutError, WebSocketException) as exc:
            raise ClientConnectionError(
                f"cannot connect to {self._ws_url()}: {exc}; check the address and the token"
            ) from exc
        self._ready.set()

    async def _read_loop(self) -> None:
        from websockets.exceptions import ConnectionClosed

        failures = 0
        while not self._closed:
            try:
                async for raw in self._ws:
                    self._dispatch(_json(raw))
            except ConnectionClosed:
                pass
            self._drops += 1
            if self._closed or not self.reconnect:
                break
            self._ready.clear()
            self._put({"type": "disconnected"})
            # Reconnect with jittered exponential backoff, resuming the same session.
            while not self._closed:
                first, largest = self.backoff_s
                delay = min(largest, first * 2**failures) * (0.5 + random.random() / 2)
                await asyncio.sleep(delay)
                try:
                    await self._open(10.0)
                    failures = 0
                    self._put({"type": "reconnected", "sessionId": self.session_id})
                    break
                except ClientConnectionError as exc:
                    failures += 1
                    log.info("reconnect %d failed: %s", failures, exc)
                    if failures >= self.max_reconnects:
                        self._put(
                            {
                                "type": "error",
                                "code": "gateway_unreachable",
                                "message": f"gave up after {failures} reconnects: {exc}",
                            }
                        )
                        self._closed = True
                        return
        self._put({"type": "disconnected"})

    def _dispatch(self, frame: dict[str, Any]) -> None:
        kind = frame.get("type")
        if kind == "tool_call_request":
            self._spawn(self._run_tool(frame))
            return
        if kind == "approval_request" and self.on_approval is not None:
            self._spawn(self._auto_approve(frame))
        self._put(frame)

    def _put(self, frame: dict[str, Any]) -> None:
        if self._events.full():
            self._events.get_nowait()  # a reader that fell behind loses the oldest frame
        self._events.put_nowait(frame)

    def _spawn(self, coro: Any) -> None:
        task = asyncio.create_task(coro)
        self._handlers.add(task)
        task.add_done_callback(self._handlers.discard)

    async def _run_tool(self, frame: dict[str, Any]) -> None:
        call_id = frame.get("id")
        tool = self._tools.get(str(frame.get("name")))
        try:
            if tool is None:
                raise LookupError(f"this client has no tool {frame.get('name')!r}")
            output = tool.handler(frame.get("arguments") or {})
            if inspect.isawaitable(output):
                output = await output
            reply = {"type": "tool_result", "id": call_id, "output": _text(output), "success": True}
        except Exception as exc:  # reported to the model as the tool's failure
            reply = {
                "type": "tool_error",
                "id": call_id,
                "error": f"{type(exc).__name__}: {exc}",
                "success": False,
            }
        with contextlib.suppress(Exception):
            await self._send(reply)

    async def _auto_approve(
        self, frame: dict[str, Any], handler: ApprovalHandler | None = None
    ) -> None:
        handler = handler if handler is not None else self.on_approval
        assert handler is not None
        reason = ""
        try:
            if inspect.iscoroutinefunction(handler):
                answer: Any = await handler(frame)
            else:
                # A plain function may block (input()): never on the event loop, which must
                # keep reading frames and answering pings meanwhile.
                answer = await asyncio.to_thread(handler, frame)
                if inspect.isawaitable(answer):
                    answer = await answer
        except Exception as exc:  # the handler's bug declines, and says why
            log.warning("the approval handler raised %s: declined", exc)
            answer, reason = False, f"the client's approval handler failed: {exc}"
        with contextlib.suppress(Exception):
            await self.approve(str(frame["id"]), bool(answer), reason)

    async def _send(self, frame: dict[str, Any]) -> None:
        if self._ws is None:
            raise ClientConnectionError("not connected: call connect() first")
        await self._ws.send(json.dumps(frame))

    # --- chatting ------------------------------------------------------------------------

    async def send(self, text: str) -> None:
        """Send a user message (waits while a reconnect is in progress). Cancel-safe."""
        await self._ready.wait()
        await self._send({"type": "message", "content": text})

    async def events(self) -> AsyncIterator[dict[str, Any]]:
        """Every frame from the gateway except tool requests (this client answers those).

        Safe to cancel (frames stay queued for the next reader).
        """
        while True:
            frame = await self._events.get()
            yield frame
            if frame.get("type") == "disconnected" and self._closed:
                return

    async def next_event(self, *types: str) -> dict[str, Any]:
        """The next frame (of one of ``types``, if given; others are skipped). Cancel-safe."""
        while True:
            frame = await self._events.get()
            if not types or frame.get("type") in types:
                return frame

    async def ask(self, text: str, *, on_approval: ApprovalHandler | None = None) -> str:
        """Send ``text`` and return the turn's full response.

        Approval requests of the turn go to ``on_approval`` (this call's), else to the
        client's; with neither, each is declined at once with a warning in the log, so the
        turn ends instead of waiting for an answer nobody can give.

        Raises:
            TurnLost: The connection dropped during the turn (the answer did not arrive; the
                gateway keeps the session).
            TurnFailed: The turn ended with an error or was aborted.

        Cancelling stops waiting; the turn goes on (send :meth:`abort` to stop it).
        """
        drops = self._drops
        await self.send(text)
        while True:
            frame = await self.next_event(*_END_TYPES, "approval_request", "disconnected")
            kind = frame["type"]
            if kind == "done":
                return str(frame.get("full_response", ""))
            if kind == "aborted":
                raise TurnFailed(f"the turn was aborted: {frame.get('reason', '')}", "aborted")
            if kind == "approval_request":
                self._answer_for_ask(frame, on_approval)
                continue
            if kind == "disconnected":
                if self._drops == drops:
                    continue  # a drop from before this turn
                raise TurnLost(
                    f"the connection to the gateway dropped during the turn, so its answer "
                    f"did not arrive; the gateway keeps session {self.session_id!r}: resume it "
                    "(GatewayClient(session_id=...)) to read the conversation",
                    self.session_id or "",
                )
            raise TurnFailed(
                str(frame.get("message") or "the turn failed"), str(frame.get("code", ""))
            )

    def _answer_for_ask(self, frame: dict[str, Any], handler: ApprovalHandler | None) -> None:
        """Route an approval request met by :meth:`ask` (the client's handler has it already)."""
        if handler is not None:
            self._spawn(self._auto_approve(frame, handler))
        elif self.on_approval is None:
            what = frame.get("summary") or frame.get("tool") or "an action"
            log.warning(
                "the gateway asked to approve %s; declined: this client has no approval handler "
                "(pass on_approval= to GatewayClient or to ask())",
                what,
            )
            self._spawn(
                self._decline(str(frame.get("id", "")), "the client has no approval handler")
            )

    async def _decline(self, request_id: str, reason: str) -> None:
        with contextlib.suppress(Exception):  # a dropped socket: the gateway times it out
            await self.approve(request_id, False, reason)

    async def approve(self, request_id: str, approved: bool = True, reason: str = "") -> None:
        """Answer an ``approval_request``.

        Safe to cancel.
        """
        await self._send(
            {"type": "approval_response", "id": request_id, "approved": approved, "reason": reason}
        )

    async def abort(self) -> None:
        """Ask the gateway to abort the running turn. Safe to cancel."""
        await self._send({"type": "abort"})

    async def regenerate(self) -> None:
        """Ask the gateway to answer the last message again. Safe to cancel."""
        await self._send({"type": "regenerate"})

    async def drop_connection(self) -> None:
        """Close the socket as a network failure would (tests of reconnecting)."""
        if self._ws is not None:
            await self._ws.close()

    async def aclose(self) -> None:
        """Close the session (no reconnect). Idempotent.

        Safe to cancel.
        """
        self._closed = True
        if self._ws is not None:
            with contextlib.suppress(Exception):
                await self._ws.close()
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)
        for task in list(self._handlers):
            task.cancel()
        await asyncio.gather(*self._handlers, return_exceptions=True)

    async def __aenter__(self) -> GatewayClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _text(output: Any) -> str:
    if isinstance(output, str):
        return output
    try:
        return json.dumps(output, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(output)

"""Our side of a session with another MCP server: JSON-RPC requests over stdio or streamable
HTTP, every byte read from the server capped BEFORE it is parsed.

:class:`StdioPeer` launches the server as a child in a process group of its own (ended with
the peer) and reads its stdout through a :class:`~.mcp_wire.LineReader`; :class:`HttpPeer`
POSTs each request (JSON or event-stream answers, ``Mcp-Session-Id`` and
``MCP-Protocol-Version`` kept) with an httpx client whose transport the caller gives (the
address-pinned one). A message over ``max_bytes`` fails the request it answered (or, on
stdio, every request waiting) with :class:`McpMessageTooLarge`; memory stays at the cap.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import itertools
import logging
import os
import signal
from typing import Any

from clawseed_edge.api import ClawseedError

from . import mcp_wire as wire

__all__ = ["HttpPeer", "McpMessageTooLarge", "McpPeerClosed", "StdioPeer", "initialize"]

log = logging.getLogger(__name__)

_CHUNK = 1 << 16
#: How long a child has to leave after its stdin closes, then after SIGTERM.
EXIT_GRACE_S = 2.0
#: The environment a stdio server starts with (plus its ``env``): never our secrets.
_INHERITED = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL")


class McpPeerClosed(ClawseedError, ConnectionError):
    """The connection to the MCP server closed (the child exited, the session ended)."""

    code = "mcp_connection_closed"


class McpMessageTooLarge(ClawseedError, ValueError):
    """The MCP server sent a message over the cap; it was dropped unparsed."""

    code = "mcp_message_too_large"


class _Peer(abc.ABC):
    """Requests and their answers, whatever carries them."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.closed = asyncio.Event()
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[Any]] = {}

    async def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """The result of ``method``. Cancel-safe: the server is told to cancel it.

        Raises:
            wire.RpcError: The server answered with an error.
            McpPeerClosed: The connection closed first.
            McpMessageTooLarge: The answer was over the cap.
        """
        if self.closed.is_set():
            raise McpPeerClosed("connection closed")
        request_id = next(self._ids)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        waiter: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = waiter
        try:
            await self._send(message, request_id)
            return await waiter
        except asyncio.CancelledError:
            if not self.closed.is_set():
                with contextlib.suppress(Exception):
                    await self.notify(
                        "notifications/cancelled", {"requestId": request_id, "reason": "timeout"}
                    )
            raise
        finally:
            self._waiting.pop(request_id, None)

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self._send(message, None)

    @abc.abstractmethod
    async def _send(self, message: dict[str, Any], request_id: int | None) -> None:
        """Send one message (``request_id``: the request it is, whose answer to read)."""

    async def _received(self, message: Any) -> None:
        """One message from the server: an answer, a request (ping), or a notification."""
        if not isinstance(message, dict):
            return
        if "method" in message:
            if "id" in message:  # we offer no capabilities: only ping is answered
                if message.get("method") == "ping":
                    await self._send(wire.result(message["id"], {}), None)
                else:
                    text = f"{str(message['method'])[:60]} is not offered by this client"
                    await self._send(wire.error(message["id"], wire.METHOD_NOT_FOUND, text), None)
            return
        waiter = self._waiting.get(message.get("id"))  # type: ignore[arg-type]
        if waiter is None or waiter.done():
            return
        failure = message.get("error")
        if failure is not None:
            failure = failure if isinstance(failure, dict) else {}
            code = failure.get("code")
            waiter.set_exception(
                wire.RpcError(
                    code if isinstance(code, int) else wire.INTERNAL_ERROR,
                    str(failure.get("message", "an error without a message"))[:500],
                )
            )
        else:
            waiter.set_result(message.get("result"))

    def _fail_all(self, exc: Exception) -> None:
        for waiter in self._waiting.values():
            if not waiter.done():
                waiter.set_exception(exc)

    def _too_large(self) -> McpMessageTooLarge:
        return McpMessageTooLarge(
            f"the server sent a message over {self.max_bytes} bytes; it was dropped unread "
            "(raise max_result_chars to allow larger results, or ask for less)"
        )


async def initialize(peer: _Peer, client_version: str) -> dict[str, Any]:
    """The handshake (the newest handshake-era revision): the server's ``initialize`` result."""
    answer = await peer.request(
        "initialize",
        {
            "protocolVersion": wire.LATEST_HANDSHAKE,
            "capabilities": {},
            "clientInfo": {"name": "clawseed-edge", "version": client_version},
        },
    )
    if not isinstance(answer, dict):
        raise wire.RpcError(wire.INVALID_REQUEST, "the server's initialize answer is not an object")
    if isinstance(peer, HttpPeer):
        version = answer.get("protocolVersion")
        peer.version = str(version) if isinstance(version, str) else wire.LATEST_HANDSHAKE
    await peer.notify("notifications/initialized")
    return answer


class StdioPeer(_Peer):
    """A server launched as a child, spoken to on its stdin/stdout.

    Args:
        command, args, env: The program, its arguments, what is added to a minimal environment.
        stderr: The file descriptor the child's stderr goes to.
        max_bytes: The largest message read from it.
    """

    def __init__(
        self, command: str, args: list[str], env: dict[str, str], stderr: int, max_bytes: int
    ) -> None:
        super().__init__(max_bytes)
        self.command, self.args, self.env, self.stderr = command, args, env, stderr
        self.process: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()

    async def __aenter__(self) -> StdioPeer:
        environment = {k: os.environ[k] for k in _INHERITED if k in os.environ}
        environment.update(self.env)
        self.process = await asyncio.create_subprocess_exec(
            self.command,
            *self.args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=self.stderr,
            env=environment,
            start_new_session=True,  # its own process group: ended as one
        )
        self._reader = asyncio.create_task(self._read(), name=f"mcp-read-{self.command}")
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    async def _read(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        lines = wire.LineReader(self.max_bytes)
        try:
            while chunk := await self.process.stdout.read(_CHUNK):
                for line in lines.feed(chunk):
                    if isinstance(line, wire.WireTooLarge):
                        self._fail_all(self._too_large())
                        continue
                    try:
                        message = wire.decode(line)
                    except wire.RpcError:
                        log.warning("MCP server %s wrote a line that is not JSON", self.command)
                        continue
                    await self._received(message)
        finally:
            self.closed.set()
            self._fail_all(McpPeerClosed("connection closed: the server exited"))

    async def _send(self, message: dict[str, Any], request_id: int | None) -> None:
        process = self.process
        if process is None or process.stdin is None or self.closed.is_set():
            raise McpPeerClosed("connection closed")
        try:
            async with self._lock:
                process.stdin.write(wire.encode(message) + b"\n")
                await process.stdin.drain()
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise McpPeerClosed("connection closed: the server's stdin is gone") from exc

    async def aclose(self) -> None:
        """End the child: close its stdin, then SIGTERM, then SIGKILL its group. Idempotent."""
        process = self.process
        if process is not None and process.returncode is None:
            with contextlib.suppress(Exception):
                assert process.stdin is not None
                process.stdin.close()
            for sig in (None, signal.SIGTERM, signal.SIGKILL):
                if sig is not None:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.killpg(process.pid, sig)
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(EXIT_GRACE_S):
                        await process.wait()
                        break
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(BaseException):
                await self._reader
        self.closed.set()


class HttpPeer(_Peer):
    """A server at a streamable-HTTP URL; ``http`` is the httpx client to POST with (closed
    with the peer)."""

    def __init__(self, url: str, http: Any, max_bytes: int) -> None:
        super().__init__(max_bytes)
        self.url = url
        self.http = http
        self.session_id: str | None = None
        self.version: str | None = None
        self._posts: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> HttpPeer:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    def _headers(self) -> dict[str, str]:
        headers = {
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
        }
        if self.session_id:
            headers["Mcp-Session-Id"] = self.session_id
        if self.version:
            headers["MCP-Protocol-Version"] = self.version
        return headers

    async def _send(self, message: dict[str, Any], request_id: int | None) -> None:
        if self.closed.is_set():
            raise McpPeerClosed("connection closed")
        if request_id is None:  # a notification or an answer: the server says 202
            await self._post(message, None)
            return
        # The answer arrives on this POST's response, read by a task of its own.
        task = asyncio.get_running_loop().create_task(self._post(message, request_id))
        self._posts.add(task)
        task.add_done_callback(self._posts.discard)

    async def _post(self, message: dict[str, Any], request_id: int | None) -> None:
        try:
            async with self.http.stream(
                "POST", self.url, content=wire.encode(message), headers=self._headers()
            ) as response:
                await self._answer(response, request_id)
        except Exception as exc:
            failure = exc if isinstance(exc, McpPeerClosed | McpMessageTooLarge) else None
            if failure is None:
                failure = McpPeerClosed(f"connection closed: {type(exc).__name__}: {exc}"[:300])
            if request_id is None:
                raise failure from exc
            waiter = self._waiting.get(request_id)
            if waiter is not None and not waiter.done():
                waiter.set_exception(failure)

    async def _answer(self, response: Any, request_id: int | None) -> None:
        if response.status_code == 404 and self.session_id is not None:
            self.closed.set()
            raise McpPeerClosed("session terminated by the server (404)")
        if response.status_code >= 400:
            body = await _capped_body(response, 2000)
            text = body.decode("utf-8", "replace")[:300] if body else ""
            raise McpPeerClosed(f"the server answered HTTP {response.status_code}: {text}")
        session = response.headers.get("mcp-session-id")
        if session:
            self.session_id = session[:200]
        if request_id is None:
            return
        kind = response.headers.get("content-type", "")
        if kind.startswith("text/event-stream"):
            events = wire.SseReader(self.max_bytes)
            async for chunk in response.aiter_bytes():
                for data in events.feed(chunk):
                    if isinstance(data, wire.WireTooLarge):
                        raise self._too_large()
                    with contextlib.suppress(wire.RpcError):
                        await self._received(wire.decode(data))
                waiter = self._waiting.get(request_id)
                if waiter is None or waiter.done():
                    return  # answered: the rest of the stream is not ours to wait for
            return
        body = await _capped_body(response, self.max_bytes)
        if body is None:
            raise self._too_large()
        await self._received(wire.decode(body))

    async def aclose(self) -> None:
        """End the session (DELETE) and the HTTP client. Idempotent."""
        if self.closed.is_set() and self.http is None:
            return
        self.closed.set()
        for task in list(self._posts):
            task.cancel()
        if self.http is not None:
            if self.session_id:
                with contextlib.suppress(Exception):
                    async with asyncio.timeout(2.0):
                        await self.http.delete(self.url, headers=self._headers())
            with contextlib.suppress(Exception):
                await self.http.aclose()
            self.http = None
        self._fail_all(McpPeerClosed("connection closed"))


async def _capped_body(response: Any, cap: int) -> bytes | None:
    """The response body, or None once it passes ``cap`` (reading stops there)."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > cap:
            return None
        chunks.append(chunk)
    return b"".join(chunks)

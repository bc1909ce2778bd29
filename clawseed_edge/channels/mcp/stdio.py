"""MCP over stdio: newline-delimited JSON-RPC on this process's stdin and stdout.

One session per process. Each request runs in a task of its own (at most
:data:`~.session.MAX_IN_FLIGHT` at once), so a call waiting for an approval does not hold up a
``ping`` or the answer to our own elicitation. A line over :data:`MAX_MESSAGE_BYTES` is
skipped as it arrives (never held) and answered with an error.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import stat
import sys
from collections.abc import Awaitable, Callable
from typing import Any, BinaryIO

from clawseed_edge.tools import mcp_wire as wire

from .backend import ToolBackend
from .handlers import McpServer
from .session import MAX_IN_FLIGHT, Session

__all__ = ["MAX_MESSAGE_BYTES", "serve_stdio"]

log = logging.getLogger(__name__)

#: The largest message a client may send (a call's arguments are capped lower still).
MAX_MESSAGE_BYTES = 1 << 20
#: Notifications (resources/updated) waiting to be written; more are dropped (a slow client
#: loses updates, not the service's memory).
MAX_PENDING_NOTIFICATIONS = 32
_CHUNK = 1 << 16


class _StdoutWriter:
    """Writes whole messages to a file descriptor, one at a time, off the event loop."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.lock = asyncio.Lock()
        self.pending = 0

    async def send(self, message: dict[str, Any]) -> None:
        data = wire.encode(message) + b"\n"
        async with self.lock:
            await asyncio.to_thread(_write_all, self.fd, data)

    def notify(self, message: dict[str, Any]) -> None:
        if self.pending >= MAX_PENDING_NOTIFICATIONS:
            return
        self.pending += 1

        async def send() -> None:
            try:
                await self.send(message)
            except OSError:
                pass  # the client is gone: stdin's end stops the session
            finally:
                self.pending -= 1

        asyncio.get_running_loop().create_task(send())


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


async def serve_stdio(
    backend: ToolBackend, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None
) -> None:
    """Serve MCP on stdin/stdout (by default this process's) until the client closes stdin.

    Cancel-safe: the requests in flight are cancelled.
    """
    server = McpServer(backend)
    read = await _reader(stdin or sys.stdin.buffer)
    writer = _StdoutWriter((stdout or sys.stdout.buffer).fileno())
    session = Session("stdio", "stdio", may_approve=True, notify=writer.notify)
    lines = wire.LineReader(MAX_MESSAGE_BYTES)
    running: set[asyncio.Task[None]] = set()
    try:
        while chunk := await read():
            for line in lines.feed(chunk):
                if isinstance(line, wire.WireTooLarge):
                    await writer.send(wire.error(None, wire.INVALID_REQUEST, str(line)))
                    continue
                await _dispatch(server, session, writer, line, running)
    finally:
        for task in running:
            task.cancel()
        with contextlib.suppress(BaseException):
            await asyncio.gather(*running, return_exceptions=True)
        server.ended(session)


async def _reader(stdin: BinaryIO) -> Callable[[], Awaitable[bytes]]:
    """What reads the next chunk of stdin: the event loop's pipe reader for a pipe or a socket
    (what hosts give); a thread for anything else (a terminal, a file), whose descriptor the
    loop would otherwise leave non-blocking for the shell after us."""
    mode = os.fstat(stdin.fileno()).st_mode
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        reader = asyncio.StreamReader(limit=_CHUNK)
        loop = asyncio.get_running_loop()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
        return lambda: reader.read(_CHUNK)
    fd = stdin.fileno()
    return lambda: asyncio.to_thread(os.read, fd, _CHUNK)


async def _dispatch(
    server: McpServer,
    session: Session,
    writer: _StdoutWriter,
    line: bytes,
    running: set[asyncio.Task[None]],
) -> None:
    try:
        message = wire.decode(line)
    except wire.RpcError as exc:
        await writer.send(wire.error(None, exc.rpc_code, str(exc)))
        return
    if not (isinstance(message, dict) and "method" in message and "id" in message):
        # answers to our questions and notifications are quick: handled in order, here
        answer = await server.handle(session, message, writer.send)
        if answer is not None:
            await writer.send(answer)
        return
    if len(running) >= MAX_IN_FLIGHT:
        await writer.send(
            wire.error(message["id"], -32000, f"at most {MAX_IN_FLIGHT} requests at once; wait")
        )
        return

    async def run() -> None:
        answer = await server.handle(session, message, writer.send)
        if answer is not None:
            with contextlib.suppress(OSError):
                await writer.send(answer)

    task = asyncio.get_running_loop().create_task(run())
    running.add(task)
    task.add_done_callback(running.discard)

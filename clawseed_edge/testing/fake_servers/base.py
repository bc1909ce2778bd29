"""HTTP/1.1 plumbing shared by the fake model servers: requests, replies, the base server.

:class:`RecordedRequest` is what a server received, :class:`Reply` what it answers next, and
:class:`FakeModelServer` binds 127.0.0.1, reads one request per connection and routes it to the
subclass's handlers (see the package docstring for how tests script them).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import re
import threading
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Self

from clawseed_edge.api.types import ToolCall


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request a fake server received."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        """The body decoded as JSON (None if empty)."""
        return json.loads(self.body) if self.body else None


@dataclass(frozen=True, slots=True)
class Reply:
    """What a fake server answers to the next model request.

    Build one with the constructors: :meth:`text`, :meth:`tool_call`, :meth:`tool_calls`,
    :meth:`error`, :meth:`cut`, :meth:`garbage`, :meth:`not_http`, :meth:`hang`,
    :meth:`trickle`.

    Attributes:
        content: Visible text (streamed word by word).
        calls: Tool calls as (name, arguments); a ``str`` argument is sent verbatim where the
            protocol carries a JSON string (OpenAI), to test broken arguments.
        thinking: Reasoning text, sent before the answer.
        status: HTTP status; >= 400 sends the protocol's error body with ``message``.
        message: The error message for an error status.
        headers: Extra response headers (``Retry-After``).
        cut_after: In a stream, close the connection after this many text pieces.
        body: Send these bytes as a 200 body instead of the protocol (garbage).
        raw: Send these bytes instead of any HTTP response, then close.
        never_answer: Never answer (until the server closes).
        trickle_s: Send a 200 head, then one space every ``trickle_s`` seconds, for ever
            (a server that keeps every read alive but never finishes).
        input_tokens / output_tokens / cached_tokens: Usage to report (None: counted words).
    """

    content: str = ""
    calls: tuple[tuple[str, Mapping[str, Any] | str], ...] = ()
    thinking: str = ""
    status: int = 200
    message: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    cut_after: int | None = None
    body: bytes | None = None
    raw: bytes | None = None
    never_answer: bool = False
    trickle_s: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_tokens: int = 0

    @classmethod
    def text(cls, content: str, *, thinking: str = "", **kw: Any) -> Reply:
        """A plain answer, optionally with reasoning text first."""
        return cls(content=content, thinking=thinking, **kw)

    @classmethod
    def tool_call(cls, name: str, arguments: Mapping[str, Any] | str, **kw: Any) -> Reply:
        """One native tool call (with optional ``content`` text before it)."""
        return cls(calls=((name, arguments),), **kw)

    @classmethod
    def tool_calls(
        cls, calls: Iterable[ToolCall | tuple[str, Mapping[str, Any] | str]], **kw: Any
    ) -> Reply:
        """Several native tool calls in one answer."""
        items = tuple(
            (c.name, dict(c.arguments)) if isinstance(c, ToolCall) else (c[0], c[1]) for c in calls
        )
        return cls(calls=items, **kw)

    @classmethod
    def error(cls, status: int, message: str = "", *, retry_after: float | None = None) -> Reply:
        """An HTTP error in the protocol's error shape (429 with ``Retry-After`` if given)."""
        headers = {"Retry-After": f"{retry_after:g}"} if retry_after is not None else {}
        return cls(status=status, message=message or f"fake error {status}", headers=headers)

    @classmethod
    def cut(cls, content: str, *, after: int = 1) -> Reply:
        """A streamed answer whose connection drops after ``after`` pieces of text."""
        return cls(content=content, cut_after=after)

    @classmethod
    def garbage(cls, body: bytes = b"\x00\xff<html>not a model server</html>\x07") -> Reply:
        """A 200 answer whose body is not the protocol."""
        return cls(body=body)

    @classmethod
    def not_http(cls, data: bytes = b"\x16\x03\x01\x00garbage\r\n\r\n") -> Reply:
        """Bytes that are not HTTP at all, then the connection closes."""
        return cls(raw=data)

    @classmethod
    def hang(cls) -> Reply:
        """Accept the request and never answer."""
        return cls(never_answer=True)

    @classmethod
    def trickle(cls, every_s: float = 1.0) -> Reply:
        """Answer 200, then one byte every ``every_s`` seconds until the server closes."""
        return cls(trickle_s=every_s)


def describe_images(images: list[bytes]) -> str:
    """``no image`` or ``1 image: 14773 bytes sha256 0123456789ab`` (one entry per image)."""
    if not images:
        return "no image"
    parts = [f"{len(i)} bytes sha256 {hashlib.sha256(i).hexdigest()[:12]}" for i in images]
    return f"{len(images)} image{'s' if len(images) > 1 else ''}: " + "; ".join(parts)


def split_words(text: str) -> list[str]:
    """Text cut into stream pieces: each word with the spaces after it."""
    return re.findall(r"\s*\S+\s*", text) or ([text] if text else [])


def _count(text: str) -> int:
    return len(text.split())


class _Stop(Exception):
    """Stop writing this response: the reply says to cut the connection."""


class _Http:
    """One HTTP/1.1 response on a connection (Content-Length or chunked)."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.writer = writer
        self.chunked = False

    def _head(self, status: int, headers: Mapping[str, str]) -> bytes:
        lines = [f"HTTP/1.1 {status} Fake", "Connection: close"]
        lines += [f"{k}: {v}" for k, v in headers.items()]
        return ("\r\n".join(lines) + "\r\n\r\n").encode()

    async def send(
        self, status: int, body: bytes, content_type: str, headers: Mapping[str, str] = {}
    ) -> None:
        head = {"Content-Type": content_type, "Content-Length": str(len(body)), **headers}
        self.writer.write(self._head(status, head) + body)
        await self.writer.drain()

    async def send_json(self, status: int, obj: Any, headers: Mapping[str, str] = {}) -> None:
        await self.send(status, json.dumps(obj).encode(), "application/json", headers)

    async def start_chunked(self, content_type: str, headers: Mapping[str, str] = {}) -> None:
        head = {"Content-Type": content_type, "Transfer-Encoding": "chunked", **headers}
        self.writer.write(self._head(200, head))
        self.chunked = True
        await self.writer.drain()

    async def chunk(self, data: bytes) -> None:
        if data:
            self.writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            await self.writer.drain()

    async def end_chunked(self) -> None:
        self.writer.write(b"0\r\n\r\n")
        await self.writer.drain()


Handler = Callable[[RecordedRequest, _Http], Awaitable[None]]


class FakeModelServer:
    """Base of the fake servers: an HTTP/1.1 server on 127.0.0.1 with scripted replies.

    Args:
        port: TCP port; 0 picks a free one (read :attr:`url` after start).
        api_key: If set, requests without this key are answered 401.

    Attributes:
        requests: Every request received, in order.
        default_reply: Answer used when the queue is empty (None: HTTP 500).
    """

    def __init__(self, *, port: int = 0, api_key: str | None = None) -> None:
        self.port = port
        self.api_key = api_key
        self.requests: list[RecordedRequest] = []
        self.default_reply: Reply | None = None
        self._replies: deque[Reply] = deque()
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._closing: asyncio.Event | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._routes: dict[tuple[str, str], Handler] = {}

    # --- scripting ---------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>`` (valid once started)."""
        return f"http://127.0.0.1:{self.port}"

    def queue(self, *replies: Reply) -> Self:
        """Answer the next model requests with these replies, in order."""
        self._replies.extend(replies)
        return self

    @property
    def pending(self) -> int:
        """How many queued replies are still unused."""
        return len(self._replies)

    def next_reply(self) -> Reply:
        """The next queued reply (or the default, or a 500)."""
        if self._replies:
            return self._replies.popleft()
        if self.default_reply is not None:
            return self.default_reply
        return Reply.error(500, "fake server: no reply queued")

    def reply_for(self, request: RecordedRequest) -> Reply:
        """The next reply, with ``{saw}`` in its text replaced by what the request showed: a
        fake vision model. Each image is described by its size and digest, so a test can
        check that the very bytes a camera stored reached the model in this wire format."""
        reply = self.next_reply()
        if "{saw}" not in reply.content:
            return reply
        try:
            images = self.images_in(request.json)
        except (ValueError, TypeError, KeyError, AttributeError):
            images = []
        return replace(reply, content=reply.content.replace("{saw}", describe_images(images)))

    def images_in(self, body: Any) -> list[bytes]:
        """The images a request body carries (each fake server reads its own wire format)."""
        return []

    def requests_to(self, path: str) -> list[RecordedRequest]:
        """The recorded requests whose path is ``path``."""
        return [r for r in self.requests if r.path == path]

    # --- lifecycle ---------------------------------------------------------------------------

    async def start(self) -> None:
        """Bind 127.0.0.1 and serve."""
        self._closing = asyncio.Event()
        self._server = await asyncio.start_server(self._on_connect, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def aclose(self) -> None:
        """Stop serving and drop open connections (hung ones too). Idempotent."""
        if self._server is None:
            return
        server, self._server = self._server, None
        server.close()
        if self._closing is not None:
            self._closing.set()
        if self._tasks:
            # hung replies wake on _closing; anything still running after a second is cancelled
            _, stuck = await asyncio.wait(set(self._tasks), timeout=1.0)
            for task in stuck:
                task.cancel()
            if stuck:
                await asyncio.wait(stuck)

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __enter__(self) -> Self:
        """Serve from a thread with its own event loop (for non-async tests and the CLI)."""
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                loop.run_until_complete(self.start())
            except BaseException as exc:  # reported to the caller of __enter__
                failure.append(exc)
                ready.set()
                loop.close()
                return
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self.aclose())
            loop.close()

        self._thread = threading.Thread(target=run, name=f"{type(self).__name__}", daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError(f"{type(self).__name__} did not start within 10 s")
        if failure:
            self._thread = None
            raise failure[0]
        return self

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
            self._thread = None

    # --- HTTP --------------------------------------------------------------------------------

    async def _on_connect(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            request = await self._read_request(reader)
            if request is not None:
                self.requests.append(request)
                http = _Http(writer)
                with contextlib.suppress(_Stop):
                    await self._dispatch(request, http)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self._tasks.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _read_request(self, reader: asyncio.StreamReader) -> RecordedRequest | None:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, target, _ = lines[0].split(" ", 2)
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if ":" in line:
                key, value = line.split(":", 1)
                headers[key.strip().lower()] = value.strip()
        body = b""
        if "content-length" in headers:
            body = await reader.readexactly(int(headers["content-length"]))
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            while True:
                size = int((await reader.readuntil(b"\r\n")).strip().split(b";")[0], 16)
                data = await reader.readexactly(size + 2)
                if size == 0:
                    break
                body += data[:-2]
        return RecordedRequest(method, target.split("?", 1)[0], headers, body)

    async def _dispatch(self, request: RecordedRequest, http: _Http) -> None:
        handler = self._routes.get((request.method, request.path))
        if handler is None:
            await http.send_json(404, {"error": f"fake server: no route {request.path}"})
            return
        await handler(request, http)

    async def _pre_reply(self, reply: Reply, http: _Http, content_type: str) -> bool:
        """Handle hang/raw/garbage replies; True when the reply was fully handled."""
        if reply.never_answer:
            assert self._closing is not None
            await self._closing.wait()
            return True
        if reply.trickle_s is not None:
            assert self._closing is not None
            await http.start_chunked(content_type)
            while not self._closing.is_set():
                await http.chunk(b" ")  # whitespace: valid before JSON, never a whole line
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._closing.wait(), reply.trickle_s)
            return True
        if reply.raw is not None:
            http.writer.write(reply.raw)
            await http.writer.drain()
            return True
        if reply.body is not None:
            await http.send(200, reply.body, content_type, reply.headers)
            return True
        return False

    @staticmethod
    def fake_vector(text: str, dimensions: int) -> list[float]:
        """A deterministic unit-ish vector for ``text`` (same text, same vector)."""
        digest = hashlib.sha256(text.encode()).digest()
        return [((digest[i % len(digest)] / 255.0) * 2 - 1) for i in range(dimensions)]


def _cut_guard(reply: Reply, sent: int) -> None:
    if reply.cut_after is not None and sent >= reply.cut_after:
        raise _Stop

"""Fake model servers on 127.0.0.1 that speak the real wire protocols, for tests.

:class:`FakeOllama` (NDJSON ``/api/chat``, ``/api/show``, ``/api/embed``, ``/api/tags``),
:class:`FakeAnthropic` (SSE ``/v1/messages``) and :class:`FakeOpenAI`
(``/v1/chat/completions`` as JSON or SSE, ``/v1/embeddings``) are small HTTP/1.1 servers on
``asyncio.start_server`` (one request per connection, ``Connection: close``; streams use chunked
transfer encoding). The real SDKs talk to them unchanged.

Script them per test by queueing :class:`Reply` objects; every request is recorded::

    async with FakeOllama(models={"qwen2.5:3b": ["completion", "tools"]}) as server:
        server.queue(Reply.tool_call("led_on", {"pin": 17}), Reply.text("The LED is on."))
        provider = OllamaProvider(ProviderConfig(base_url=server.url))
        ...
        assert server.requests[0].json["model"] == "qwen2.5:3b"

From a non-async test (or to point the CLI at one), use ``with``: the server then runs its own
event loop in a thread until the block ends. With no reply queued, the server answers with
``default_reply`` if set, else HTTP 500 "fake server: no reply queued".
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import re
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Self

from clawseed_edge.api.types import ToolCall

__all__ = [
    "FakeAnthropic",
    "FakeModelServer",
    "FakeOllama",
    "FakeOpenAI",
    "RecordedRequest",
    "Reply",
]


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
    :meth:`error`, :meth:`cut`, :meth:`garbage`, :meth:`not_http`, :meth:`hang`.

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


# --- Ollama -----------------------------------------------------------------------------------


class FakeOllama(FakeModelServer):
    """A fake Ollama: NDJSON ``/api/chat``, ``/api/show``, ``/api/embed``, ``/api/tags``.

    Args:
        models: Pulled models and their capabilities (``/api/show``'s ``capabilities``);
            other models answer 404 "not found, try pulling it first" like Ollama.
        dimensions: Length of the vectors ``/api/embed`` returns.
    """

    def __init__(
        self,
        *,
        models: Mapping[str, Iterable[str]] | None = None,
        dimensions: int = 8,
        **kw: Any,
    ) -> None:
        super().__init__(**kw)
        if models is None:
            models = {"qwen2.5:3b": ("completion", "tools")}
        self.models = {name: list(caps) for name, caps in models.items()}
        self.dimensions = dimensions
        self._routes = {
            ("POST", "/api/chat"): self._chat,
            ("POST", "/api/show"): self._show,
            ("POST", "/api/embed"): self._embed,
            ("GET", "/api/tags"): self._tags,
        }

    async def _not_pulled(self, model: str, http: _Http) -> bool:
        if model in self.models:
            return False
        await http.send_json(404, {"error": f'model "{model}" not found, try pulling it first'})
        return True

    async def _show(self, request: RecordedRequest, http: _Http) -> None:
        model = request.json.get("model") or request.json.get("name", "")
        if model not in self.models:
            await http.send_json(404, {"error": f"model '{model}' not found"})
            return
        await http.send_json(
            200,
            {
                "modelfile": "",
                "parameters": "",
                "template": "{{ .Prompt }}",
                "details": {"format": "gguf", "family": "fake", "parameter_size": "3B"},
                "model_info": {"general.architecture": "fake"},
                "capabilities": self.models[model],
            },
        )

    async def _tags(self, request: RecordedRequest, http: _Http) -> None:
        await http.send_json(
            200,
            {
                "models": [
                    {"name": m, "model": m, "size": 1, "digest": "0" * 12, "details": {}}
                    for m in self.models
                ]
            },
        )

    async def _embed(self, request: RecordedRequest, http: _Http) -> None:
        data = request.json
        if await self._not_pulled(data.get("model", ""), http):
            return
        texts = data["input"] if isinstance(data["input"], list) else [data["input"]]
        vectors = [self.fake_vector(t, self.dimensions) for t in texts]
        await http.send_json(200, {"model": data["model"], "embeddings": vectors})

    async def _chat(self, request: RecordedRequest, http: _Http) -> None:
        data = request.json
        model = data.get("model", "")
        if await self._not_pulled(model, http):
            return
        if data.get("tools") and "tools" not in self.models[model]:
            await http.send_json(400, {"error": f"{model} does not support tools"})
            return
        reply = self.next_reply()
        stream = data.get("stream", True)
        ctype = "application/x-ndjson" if stream else "application/json; charset=utf-8"
        if await self._pre_reply(reply, http, ctype):
            return
        if reply.status >= 400:
            await http.send_json(reply.status, {"error": reply.message}, reply.headers)
            return
        calls = [
            {"function": {"name": name, "arguments": args if isinstance(args, Mapping) else {}}}
            for name, args in reply.calls
        ]
        final = {
            "model": model,
            "created_at": "2026-01-01T00:00:00Z",
            "done": True,
            "done_reason": "stop",
            "prompt_eval_count": reply.input_tokens
            if reply.input_tokens is not None
            else sum(_count(str(m.get("content", ""))) for m in data.get("messages", [])),
            "eval_count": reply.output_tokens
            if reply.output_tokens is not None
            else _count(reply.content),
        }
        if not stream:
            message: dict[str, Any] = {"role": "assistant", "content": reply.content}
            if reply.thinking:
                message["thinking"] = reply.thinking
            if calls:
                message["tool_calls"] = calls
            await http.send_json(200, {**final, "message": message}, reply.headers)
            return

        def line(message: dict[str, Any]) -> bytes:
            return (
                json.dumps(
                    {
                        "model": model,
                        "created_at": final["created_at"],
                        "message": message,
                        "done": False,
                    }
                ).encode()
                + b"\n"
            )

        await http.start_chunked(ctype, reply.headers)
        for piece in split_words(reply.thinking):
            await http.chunk(line({"role": "assistant", "content": "", "thinking": piece}))
        sent = 0
        for piece in split_words(reply.content):
            _cut_guard(reply, sent)
            await http.chunk(line({"role": "assistant", "content": piece}))
            sent += 1
        _cut_guard(reply, sent)
        if calls:
            await http.chunk(line({"role": "assistant", "content": "", "tool_calls": calls}))
        end = {**final, "message": {"role": "assistant", "content": ""}}
        await http.chunk(json.dumps(end).encode() + b"\n")
        await http.end_chunked()


# --- Anthropic --------------------------------------------------------------------------------

_ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}


class FakeAnthropic(FakeModelServer):
    """A fake Anthropic Messages API: ``POST /v1/messages``, JSON or SSE.

    Args:
        models: Known model ids; others answer 404 ``not_found_error``. None accepts any.
        api_key: If set, a request whose key (``x-api-key`` or ``Authorization: Bearer``, which
            the anthropic 2.x SDK sends) differs is answered 401.
    """

    def __init__(self, *, models: Iterable[str] | None = None, **kw: Any) -> None:
        super().__init__(**kw)
        self.models = set(models) if models is not None else None
        self._routes = {("POST", "/v1/messages"): self._messages}

    async def _error(
        self, http: _Http, status: int, message: str, headers: Mapping[str, str] = {}
    ) -> None:
        kind = _ANTHROPIC_ERROR_TYPES.get(status, "api_error")
        body = {"type": "error", "error": {"type": kind, "message": message}}
        await http.send_json(status, body, {"request-id": "req_fake", **headers})

    async def _messages(self, request: RecordedRequest, http: _Http) -> None:
        data = request.json
        model = data.get("model", "")
        sent_key = request.headers.get("x-api-key") or request.headers.get(
            "authorization", ""
        ).removeprefix("Bearer ")
        if self.api_key is not None and sent_key != self.api_key:
            await self._error(http, 401, "invalid x-api-key")
            return
        if self.models is not None and model not in self.models:
            await self._error(http, 404, f"model: {model}")
            return
        reply = self.next_reply()
        stream = bool(data.get("stream"))
        if await self._pre_reply(
            reply, http, "text/event-stream" if stream else "application/json"
        ):
            return
        if reply.status >= 400:
            await self._error(http, reply.status, reply.message, reply.headers)
            return
        blocks: list[dict[str, Any]] = []
        if reply.thinking:
            blocks.append({"type": "thinking", "thinking": reply.thinking, "signature": "sig"})
        if reply.content:
            blocks.append({"type": "text", "text": reply.content})
        for i, (name, args) in enumerate(reply.calls):
            blocks.append(
                {
                    "type": "tool_use",
                    "id": f"toolu_{i + 1:02d}",
                    "name": name,
                    "input": args if isinstance(args, Mapping) else {},
                }
            )
        stop = "tool_use" if reply.calls else "end_turn"
        usage = {
            "input_tokens": reply.input_tokens if reply.input_tokens is not None else 10,
            "output_tokens": reply.output_tokens
            if reply.output_tokens is not None
            else _count(reply.content) + len(reply.calls),
            "cache_read_input_tokens": reply.cached_tokens,
            "cache_creation_input_tokens": 0,
        }
        message = {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": blocks,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": usage,
        }
        if not stream:
            await http.send_json(200, message, {"request-id": "req_fake", **reply.headers})
            return

        async def event(kind: str, **fields: Any) -> None:
            payload = json.dumps({"type": kind, **fields})
            await http.chunk(f"event: {kind}\ndata: {payload}\n\n".encode())

        async def delta(index: int, kind: str, **fields: Any) -> None:
            await event("content_block_delta", index=index, delta={"type": kind, **fields})

        await http.start_chunked("text/event-stream", {"request-id": "req_fake", **reply.headers})
        start = {**message, "content": [], "stop_reason": None}
        await event("message_start", message={**start, "usage": {**usage, "output_tokens": 1}})
        await event("ping")
        sent = 0
        first_call = len(blocks) - len(reply.calls)
        for index, block in enumerate(blocks):
            kind = block["type"]
            empty: dict[str, dict[str, Any]] = {
                "text": {"text": ""},
                "thinking": {"thinking": ""},
                "tool_use": {"input": {}},
            }
            await event("content_block_start", index=index, content_block={**block, **empty[kind]})
            if kind == "text":
                for piece in split_words(block["text"]):
                    _cut_guard(reply, sent)
                    await delta(index, "text_delta", text=piece)
                    sent += 1
                _cut_guard(reply, sent)
            elif kind == "thinking":
                for piece in split_words(block["thinking"]):
                    await delta(index, "thinking_delta", thinking=piece)
                await delta(index, "signature_delta", signature="sig")
            else:
                raw = reply.calls[index - first_call][1]
                text = raw if isinstance(raw, str) else json.dumps(raw)
                for i in range(0, len(text), 7):
                    await delta(index, "input_json_delta", partial_json=text[i : i + 7])
            await event("content_block_stop", index=index)
        await event(
            "message_delta",
            delta={"stop_reason": stop, "stop_sequence": None},
            usage={"output_tokens": usage["output_tokens"]},
        )
        await event("message_stop")
        await http.end_chunked()


# --- OpenAI -----------------------------------------------------------------------------------


class FakeOpenAI(FakeModelServer):
    """A fake OpenAI-compatible server: ``/v1/chat/completions`` (JSON, SSE) and ``/v1/embeddings``.

    Args:
        models: Known model ids; others answer 404 ``model_not_found``. None accepts any.
        api_key: If set, a request whose bearer token differs is answered 401.
        dimensions: Length of the vectors ``/v1/embeddings`` returns.
    """

    def __init__(
        self, *, models: Iterable[str] | None = None, dimensions: int = 8, **kw: Any
    ) -> None:
        super().__init__(**kw)
        self.models = set(models) if models is not None else None
        self.dimensions = dimensions
        self._routes = {
            ("POST", "/v1/chat/completions"): self._chat,
            ("POST", "/v1/embeddings"): self._embeddings,
        }

    async def _error(
        self,
        http: _Http,
        status: int,
        message: str,
        code: str | None = None,
        headers: Mapping[str, str] = {},
    ) -> None:
        body = {"error": {"message": message, "type": "invalid_request_error", "code": code}}
        await http.send_json(status, body, headers)

    async def _check(self, request: RecordedRequest, http: _Http) -> bool:
        auth = request.headers.get("authorization", "")
        if self.api_key is not None and auth != f"Bearer {self.api_key}":
            await self._error(http, 401, "Incorrect API key provided", "invalid_api_key")
            return False
        model = (request.json or {}).get("model", "")
        if self.models is not None and model not in self.models:
            await self._error(http, 404, f"The model `{model}` does not exist", "model_not_found")
            return False
        return True

    async def _embeddings(self, request: RecordedRequest, http: _Http) -> None:
        if not await self._check(request, http):
            return
        data = request.json
        texts = data["input"] if isinstance(data["input"], list) else [data["input"]]
        await http.send_json(
            200,
            {
                "object": "list",
                "model": data.get("model"),
                "data": [
                    {
                        "object": "embedding",
                        "index": i,
                        "embedding": self.fake_vector(t, self.dimensions),
                    }
                    for i, t in enumerate(texts)
                ],
                "usage": {"prompt_tokens": sum(map(_count, texts)), "total_tokens": 0},
            },
        )

    async def _chat(self, request: RecordedRequest, http: _Http) -> None:
        if not await self._check(request, http):
            return
        data = request.json
        model = data.get("model", "")
        reply = self.next_reply()
        stream = bool(data.get("stream"))
        if await self._pre_reply(
            reply, http, "text/event-stream" if stream else "application/json"
        ):
            return
        if reply.status >= 400:
            await self._error(http, reply.status, reply.message, headers=reply.headers)
            return
        calls: list[dict[str, Any]] = [
            {
                "id": f"call_{i + 1}",
                "type": "function",
                "function": {"name": name, "arguments": a if isinstance(a, str) else json.dumps(a)},
            }
            for i, (name, a) in enumerate(reply.calls)
        ]
        finish = "tool_calls" if calls else "stop"
        usage = {
            "prompt_tokens": reply.input_tokens if reply.input_tokens is not None else 10,
            "completion_tokens": reply.output_tokens
            if reply.output_tokens is not None
            else _count(reply.content),
            "prompt_tokens_details": {"cached_tokens": reply.cached_tokens},
        }
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]  # type: ignore[operator]
        base = {"id": "chatcmpl-fake", "created": int(time.time()), "model": model}
        if not stream:
            message: dict[str, Any] = {"role": "assistant", "content": reply.content or None}
            if reply.thinking:
                message["reasoning_content"] = reply.thinking
            if calls:
                message["tool_calls"] = calls
            await http.send_json(
                200,
                {
                    **base,
                    "object": "chat.completion",
                    "usage": usage,
                    "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                },
                reply.headers,
            )
            return

        async def chunk(
            delta: dict[str, Any], finish_reason: str | None = None, **extra: Any
        ) -> None:
            payload = {
                **base,
                "object": "chat.completion.chunk",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
                **extra,
            }
            await http.chunk(f"data: {json.dumps(payload)}\n\n".encode())

        await http.start_chunked("text/event-stream", reply.headers)
        await chunk({"role": "assistant", "content": ""})
        for piece in split_words(reply.thinking):
            await chunk({"reasoning_content": piece})
        sent = 0
        for piece in split_words(reply.content):
            _cut_guard(reply, sent)
            await chunk({"content": piece})
            sent += 1
        _cut_guard(reply, sent)
        for i, call in enumerate(calls):
            fn = call["function"]
            head = {"index": i, "id": call["id"], "type": "function"}
            await chunk({"tool_calls": [{**head, "function": {**fn, "arguments": ""}}]})
            for j in range(0, len(fn["arguments"]), 6):
                part = {"index": i, "function": {"arguments": fn["arguments"][j : j + 6]}}
                await chunk({"tool_calls": [part]})
        await chunk({}, finish)
        if (data.get("stream_options") or {}).get("include_usage"):
            payload = {**base, "object": "chat.completion.chunk", "choices": [], "usage": usage}
            await http.chunk(f"data: {json.dumps(payload)}\n\n".encode())
        await http.chunk(b"data: [DONE]\n\n")
        await http.end_chunked()

"""Ollama over its REST API with httpx (imported at the first request, not before).

Chat with native tools and NDJSON streaming (``POST /api/chat``; tool arguments arrive as a
dict), thinking output, ``keep_alive`` and ``options`` (``num_ctx``, ``temperature``,
``num_predict``) from config, embeddings through ``POST /api/embed``. The API is small, so it is
spoken here directly rather than through the ``ollama`` SDK, whose pydantic models would cost a
Pi Zero 2 W about 14 MB of memory; httpx is already a base dependency.

``base_url`` takes the forms ``OLLAMA_HOST`` does: ``http://host:port``, ``host:port``,
``host`` (port 11434), ``:port`` (127.0.0.1), with or without a trailing slash.

Many Ollama models cannot call tools. :meth:`OllamaProvider.probe` asks ``/api/show`` once for
the model's capabilities and caches them (a service probes in the background once it is ready;
``agent`` and ``chat`` before their first turn), after which
``capabilities.native_tools`` is False for models without the ``tools`` capability and the
engine describes tools in the prompt instead. Before the probe, native tools are assumed.
``[provider] tool_mode = "native"`` or ``"prompt"`` overrides what the probe finds.
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any

from clawseed_edge.api.errors import (
    ConfigInvalid,
    ProviderBadResponse,
    ProviderError,
    ProviderModelNotFound,
    ProviderServerError,
)
from clawseed_edge.api.events import (
    StreamDone,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallReady,
)
from clawseed_edge.api.protocols import ProviderCapabilities
from clawseed_edge.api.types import (
    ChatMessage,
    ChatRequest,
    ChatResponse,
    StopReason,
    ToolCall,
    ToolSpec,
    Usage,
)

from ._common import (
    error_for_exception,
    error_for_status,
    error_message_from_body,
    guard_stream,
    native_tools_for,
    request_model,
)
from .config import ProviderConfig
from .constrained import (
    ask_twice,
    constrained_for,
    is_local_url,
    is_small_model,
    refuses_format,
    reply_schema,
    stream_of,
    with_instruction,
)
from .http_limits import ResponseLimits, bounded_transport
from .small_http import request_json

if TYPE_CHECKING:
    import httpx

__all__ = ["OllamaProvider", "ollama_host", "ollama_tool"]

DEFAULT_BASE_URL = "http://127.0.0.1:11434"
DEFAULT_PORT = 11434
#: The capability probe waits at most this long (or ``timeout_s`` when shorter).
PROBE_TIMEOUT_S = 10.0


def ollama_host(address: str) -> str:
    """The server URL for an ``OLLAMA_HOST``-like address.

    ``host`` and ``host:port`` mean plain HTTP (port 11434 when none is given), ``:port`` means
    127.0.0.1; ``http://host`` and ``https://host`` default to ports 80 and 443. A path is kept,
    a trailing slash is not.

    Raises:
        ConfigInvalid: the port is not a number from 0 to 65535.
    """
    text = address.strip()
    scheme, sep, rest = text.partition("://")
    port = DEFAULT_PORT
    if not sep:
        scheme, rest = "http", text
    elif scheme == "http":
        port = 80
    elif scheme == "https":
        port = 443
    split = urllib.parse.urlsplit(f"{scheme}://{rest}")
    host = split.hostname or "127.0.0.1"
    if ":" in host:  # an IPv6 address goes back into brackets
        host = f"[{host}]"
    try:
        port = split.port or port
    except ValueError:
        raise ConfigInvalid(
            f"provider.base_url {address!r} has no valid port: write it as "
            "http://host:port (Ollama listens on 11434)",
            key="provider.base_url",
        ) from None
    return f"{scheme}://{host}:{port}{split.path.rstrip('/')}"


_KEPT_PROPERTY_KEYS = frozenset({"type", "items", "description", "enum"})


def ollama_tool(spec: ToolSpec) -> dict[str, Any]:
    """A tool spec in Ollama's shape, keeping what Ollama's tool schema would drop.

    Ollama reads a tool property's ``type``, ``items``, ``description`` and ``enum`` only:
    ``minimum``/``maximum``, nested ``properties`` and the like vanish. They are folded into the
    property's description as JSON, so the model still reads them (the SecurityPolicy checks
    the values anyway).
    """
    params = dict(spec.parameters)
    props = params.get("properties")
    if isinstance(props, dict):
        folded: dict[str, Any] = {}
        for name, prop in props.items():
            if not isinstance(prop, dict):
                folded[name] = prop
                continue
            kept = {k: v for k, v in prop.items() if k in _KEPT_PROPERTY_KEYS}
            extra = {k: v for k, v in prop.items() if k not in _KEPT_PROPERTY_KEYS}
            if extra:
                note = "schema: " + json.dumps(extra, separators=(",", ":"))
                desc = kept.get("description")
                kept["description"] = f"{desc} ({note})" if desc else note
            folded[name] = kept
        params["properties"] = folded
    return {
        "type": "function",
        "function": {"name": spec.name, "description": spec.description, "parameters": params},
    }


def _message(msg: ChatMessage) -> dict[str, Any]:
    out: dict[str, Any] = {"role": msg.role, "content": msg.content}
    if msg.images:
        out["images"] = list(msg.images)
    if msg.tool_calls:
        out["tool_calls"] = [
            {"function": {"name": c.name, "arguments": dict(c.arguments)}} for c in msg.tool_calls
        ]
    if msg.role == "tool" and msg.name:
        out["tool_name"] = msg.name
    return out


def _text(value: Any, field: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ValueError(f"`{field}` is not a string")
    return value


def _count(value: Any, field: str) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"`{field}` is not an integer")
    return value


def _object(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError(f"{what} is not a JSON object")
    return value


class _Part:
    """One ``/api/chat`` answer (or NDJSON line), checked field by field.

    Raises:
        ValueError: a field is missing or of the wrong type (a bad response).
    """

    __slots__ = ("calls", "content", "data", "thinking")

    def __init__(self, data: Any) -> None:
        self.data = _object(data, "an /api/chat answer")
        message = _object(self.data.get("message"), "`message`")
        self.content = _text(message.get("content"), "message.content")
        self.thinking = _text(message.get("thinking"), "message.thinking")
        calls = message.get("tool_calls") or []
        if not isinstance(calls, list):
            raise ValueError("`message.tool_calls` is not a list")
        self.calls: list[tuple[str, dict[str, Any]]] = []
        for call in calls:
            function = _object(_object(call, "a tool call").get("function"), "a tool call function")
            name = function.get("name")
            if not isinstance(name, str):
                raise ValueError("a tool call has no name")
            arguments = function.get("arguments") or {}
            self.calls.append((name, dict(_object(arguments, "tool call arguments"))))

    @property
    def done(self) -> bool:
        return bool(self.data.get("done"))

    def tool_calls(self, start: int) -> list[ToolCall]:
        """The calls, numbered on from ``start`` earlier calls (Ollama sends no ids)."""
        return [
            ToolCall(name, arguments, f"call_{start + i + 1}")
            for i, (name, arguments) in enumerate(self.calls)
        ]

    def usage(self) -> Usage:
        return Usage(
            _count(self.data.get("prompt_eval_count"), "prompt_eval_count"),
            _count(self.data.get("eval_count"), "eval_count"),
        )

    def stop(self, has_calls: bool) -> StopReason:
        if has_calls:
            return StopReason.TOOL_USE
        if self.data.get("done_reason") == "length":
            return StopReason.MAX_TOKENS
        return StopReason.END_TURN

    def model(self, asked: str) -> str:
        return _text(self.data.get("model"), "model") or asked


def _error_detail(body: str) -> str:
    """The ``error`` of an Ollama error body, or the body itself."""
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        return body
    if isinstance(data, dict) and "error" in data:
        return str(data["error"])
    return body


class OllamaProvider:
    """A provider for a local (or remote) Ollama server.

    Args:
        config: ``base_url`` (default ``http://127.0.0.1:11434``; the forms of
            ``OLLAMA_HOST``), ``model``, ``timeout_s``, ``deadline_s`` and
            ``max_response_bytes`` (see :mod:`.http_limits`), ``temperature``, ``max_tokens``,
            ``num_ctx``, ``keep_alive``, ``think``; an ``api_key``/``api_key_env`` is sent as a
            bearer token if set (Ollama behind a proxy).
        transport: An httpx transport to use instead of the network (tests).

    Raises (from every call): ProviderUnreachable (``ollama serve`` not running),
    ProviderModelNotFound (model not pulled: the message says ``ollama pull <model>``),
    ProviderTimeout, ProviderBadResponse, ProviderServerError.
    """

    def __init__(
        self, config: ProviderConfig, *, transport: httpx.AsyncBaseTransport | None = None
    ) -> None:
        self.config = config
        self.name = config.name
        self.model = config.model or "qwen2.5:3b"
        self.base_url = (config.base_url or DEFAULT_BASE_URL).rstrip("/")
        self.host = ollama_host(self.base_url)
        self._format_taken = True  # until the server refuses a "format" schema
        self._transport = transport
        self._client_instance: httpx.AsyncClient | None = None
        self._capabilities: ProviderCapabilities | None = None
        self._model_capabilities: tuple[str, ...] | None = None
        self._dimensions: int | None = None
        self._closed = False

    def _headers(self) -> dict[str, str] | None:
        key = self.config.resolve_api_key(required=False)
        return {"Authorization": f"Bearer {key}"} if key else None

    @property
    def _client(self) -> httpx.AsyncClient:
        """The HTTP client over a bounded transport, made at the first request: an idle
        service does not load httpx (see small_http)."""
        if self._client_instance is None:
            import httpx

            config = self.config
            limits = ResponseLimits(
                config.max_response_bytes, config.deadline_s, self.name, self.model, self.base_url
            )
            headers = {"Accept": "application/json", **(self._headers() or {})}
            self._client_instance = httpx.AsyncClient(
                base_url=self.host,
                timeout=config.timeout_s,
                headers=headers,
                transport=bounded_transport(
                    httpx, self._transport or _transport(httpx, self.host), limits
                ),
            )
        return self._client_instance

    # --- capabilities ------------------------------------------------------------------------

    @property
    def capabilities(self) -> ProviderCapabilities:
        """What the model can do: after :meth:`probe`, from ``/api/show``; before, native tools
        are assumed (and vision is not)."""
        if self._capabilities is not None:
            return self._capabilities
        native = native_tools_for(self.config.tool_mode, True)
        return ProviderCapabilities(native_tools=native, vision=False, embeddings=True)

    @property
    def model_capabilities(self) -> tuple[str, ...] | None:
        """The raw ``capabilities`` list of ``/api/show`` (None before :meth:`probe`)."""
        return self._model_capabilities

    async def probe(self) -> ProviderCapabilities:
        """Ask ``/api/show`` what the model can do, once; later calls return the cached answer.

        A service calls this in the background once it is ready; ``agent`` and ``chat`` before
        their first turn. A server whose answer has no ``capabilities`` list (an older Ollama)
        is taken to support tools. The request goes through the standard library
        (:mod:`.small_http`), not httpx: probing does not load httpx into an idle process.

        Raises:
            ProviderUnreachable: no server at ``base_url``.
            ProviderModelNotFound: the model is not pulled.
            ProviderTimeout / ProviderBadResponse / ProviderError: see the message.
        """
        if self._capabilities is not None:
            return self._capabilities
        shown = await self._show()
        raw = shown.get("capabilities")
        caps = tuple(str(c) for c in raw) if isinstance(raw, list) else ("completion", "tools")
        self._model_capabilities = caps
        self._capabilities = ProviderCapabilities(
            native_tools=native_tools_for(self.config.tool_mode, "tools" in caps),
            vision="vision" in caps,
            streaming=True,
            embeddings=True,
        )
        return self._capabilities

    async def _show(self) -> dict[str, Any]:
        """``POST /api/show`` for the configured model, errors translated."""
        timeout_s = min(self.config.timeout_s, PROBE_TIMEOUT_S)
        try:
            response = await request_json(
                f"{self.host}/api/show",
                method="POST",
                payload={"model": self.model},
                headers=self._headers(),
                timeout_s=timeout_s,
            )
            if response.status >= 400:
                detail = error_message_from_body(response.text)
                if response.status == 404 and "not found" in detail:
                    raise self._not_pulled(self.model)
                raise error_for_status(
                    response.status,
                    response.text,
                    provider=self.name,
                    model=self.model,
                    base_url=self.base_url,
                )
            shown = response.json()
            if not isinstance(shown, dict):
                raise ValueError("/api/show did not answer with a JSON object")
            return shown
        except Exception as exc:
            names = {cls.__name__ for cls in type(exc).__mro__}
            if "HTTPException" in names:  # http.client: the answer was not HTTP
                exc = ValueError(f"not an HTTP answer: {exc!r}")
            raise error_for_exception(
                exc,
                provider=self.name,
                model=self.model,
                base_url=self.base_url,
                timeout_s=timeout_s,
                unreachable_hint="is `ollama serve` running?",
            ) from exc

    @property
    def embedding_dimensions(self) -> int | None:
        """The vector length, known after the first :meth:`embed`."""
        return self._dimensions

    # --- errors ------------------------------------------------------------------------------

    def _not_pulled(self, model: str) -> ProviderModelNotFound:
        return ProviderModelNotFound(
            f"model '{model}' is not pulled: run `ollama pull {model}`",
            status=404,
            provider=self.name,
            model=model,
        )

    def _answer_error(
        self, status: int | None, detail: str, model: str, retry_after: str | None = None
    ) -> ProviderError:
        """The error for an HTTP error answer (``status``) or an ``error`` line mid-stream
        (``status`` None); ``detail`` is Ollama's ``error`` text."""
        kw: dict[str, Any] = {"provider": self.name, "model": model}
        if status == 404 and "not found" in detail:
            return self._not_pulled(model)
        if "does not support tools" in detail and self.config.tool_mode == "auto":
            self._mark_no_tools()
            return ProviderError(
                f"model '{model}' does not support tools (Ollama: {detail}): the engine "
                "describes tools in the prompt from the next request; or pick a model "
                "with tool support",
                status=status,
                **kw,
            )
        if status is None:
            return ProviderServerError(
                f"{self.name} at {self.base_url} failed while answering: {detail}", **kw
            )
        return error_for_status(
            status,
            detail,
            provider=self.name,
            model=model,
            base_url=self.base_url,
            retry_after=retry_after,
        )

    def _status_error(self, response: httpx.Response, body: str, model: str) -> ProviderError:
        return self._answer_error(
            response.status_code, _error_detail(body), model, response.headers.get("retry-after")
        )

    def _error(self, exc: BaseException, model: str) -> ProviderError:
        return error_for_exception(
            exc,
            provider=self.name,
            model=model,
            base_url=self.base_url,
            timeout_s=self.config.timeout_s,
            unreachable_hint="is `ollama serve` running?",
        )

    def _mark_no_tools(self) -> None:
        caps = self.capabilities
        self._capabilities = ProviderCapabilities(
            native_tools=False, vision=caps.vision, streaming=True, embeddings=True
        )

    # --- chat --------------------------------------------------------------------------------

    def _body(self, request: ChatRequest, *, stream: bool) -> dict[str, Any]:
        options: dict[str, Any] = {}
        if self.config.num_ctx is not None:
            options["num_ctx"] = self.config.num_ctx
        temperature = (
            request.temperature if request.temperature is not None else self.config.temperature
        )
        if temperature is not None:
            options["temperature"] = temperature
        max_tokens = request.max_tokens or self.config.max_tokens
        if max_tokens:
            options["num_predict"] = max_tokens
        body: dict[str, Any] = {
            "model": request_model(request.model, self.model),
            "messages": [_message(m) for m in request.messages],
            "stream": stream,
        }
        if request.tools:
            body["tools"] = [ollama_tool(t) for t in request.tools]
        if options:
            body["options"] = options
        if self.config.keep_alive is not None:
            body["keep_alive"] = self.config.keep_alive
        if self.config.think is not None:
            body["think"] = self.config.think
        return body

    def _check_error_line(self, data: Any, model: str) -> None:
        """Ollama reports a failure after the answer started as ``{"error": ...}``."""
        if isinstance(data, dict) and data.get("error"):
            raise self._answer_error(None, str(data["error"]), model)

    @property
    def constrained_output(self) -> bool:
        """Whether requests with tools send ``format`` (a JSON schema of an answer or a call;
        ``[provider] constrained``; off for good once the server refused it)."""
        return self._format_taken and constrained_for(
            self.config.constrained,
            base_url=self.base_url,
            model=self.model,
            native_tools=self.capabilities.native_tools,
        )

    @property
    def local_small_model(self) -> bool:
        """A model of at most 2B parameters on a local server (offered fewer tools)."""
        return is_local_url(self.base_url) and is_small_model(self.model)

    async def _constrained_chat(self, request: ChatRequest) -> ChatResponse | None:
        """One request with ``format`` (asked again once if the reply does not parse); None
        when the server refuses ``format`` (then the plain request is sent).

        Raises:
            ProviderBadResponse: The reply did not parse twice ("the model did not answer").
            ProviderError: Any other failure of the server or model.
        """
        body = self._body(request, stream=False)
        model = body["model"]
        body.pop("tools", None)
        with_instruction(body["messages"], request.tools)
        body["format"] = reply_schema(request.tools)

        async def post() -> tuple[str, Usage, str] | None:
            try:
                response = await self._client.post("/api/chat", json=body)
            except Exception as exc:
                raise self._error(exc, model) from exc
            if not response.is_success:
                if refuses_format(response.status_code, _error_detail(response.text)):
                    self._format_taken = False
                    return None
                raise self._status_error(response, response.text, model)
            data = response.json()
            self._check_error_line(data, model)
            part = _Part(data)
            return part.content, part.usage(), part.model(model)

        return await ask_twice(post, request.tools, self.name, model)

    async def chat(self, request: ChatRequest) -> ChatResponse:
        """Answer one request (no streaming). Safe to cancel: the HTTP request is abandoned.

        Raises:
            ProviderError: a subclass naming the server/model and what to do.
        """
        if request.tools and self.constrained_output:
            constrained = await self._constrained_chat(request)
            if constrained is not None:
                return constrained
        body = self._body(request, stream=False)
        model = body["model"]
        try:
            response = await self._client.post("/api/chat", json=body)
            if not response.is_success:
                raise self._status_error(response, response.text, model)
            data = response.json()
            self._check_error_line(data, model)
            part = _Part(data)
            calls = part.tool_calls(0)
            return ChatResponse(
                text=part.content,
                tool_calls=tuple(calls),
                usage=part.usage(),
                stop_reason=part.stop(bool(calls)),
                thinking=part.thinking or None,
                provider=self.name,
                model=part.model(model),
            )
        except Exception as exc:
            raise self._error(exc, model) from exc

    def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        """Answer one request as events (NDJSON stream); the last is a StreamDone.

        Tool calls are yielded as soon as their line arrives (Ollama sends whole calls).

        Raises:
            ProviderStreamInterrupted: the stream broke after text was yielded.
            ProviderError: it failed before any text.
        """
        model = request_model(request.model, self.model)
        return guard_stream(self._stream(request), provider=self.name, model=model)

    async def _stream(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        if request.tools and self.constrained_output:
            # The reply is JSON: shown only once parsed, as its answer or its call.
            async for event in stream_of(await self.chat(request)):
                yield event
            return
        body = self._body(request, stream=True)
        model = body["model"]
        text: list[str] = []
        thinking: list[str] = []
        calls: list[ToolCall] = []
        final: _Part | None = None
        try:
            # leaving the block closes the HTTP response, also when our caller stops early
            async with self._client.stream("POST", "/api/chat", json=body) as response:
                if not response.is_success:
                    raw = (await response.aread()).decode("utf-8", "replace")
                    raise self._status_error(response, raw, model)
                async for line in response.aiter_lines():
                    if not line.strip():
                        continue
                    data = json.loads(line)
                    self._check_error_line(data, model)
                    part = _Part(data)
                    if part.thinking:
                        thinking.append(part.thinking)
                        yield ThinkingDelta(part.thinking)
                    if part.content:
                        text.append(part.content)
                        yield TextDelta(part.content)
                    for call in part.tool_calls(len(calls)):
                        calls.append(call)
                        yield ToolCallReady(call)
                    if part.done:
                        final = part
                        break
        except Exception as exc:
            raise self._error(exc, model) from exc
        if final is None:
            raise ProviderBadResponse(
                f"the stream from {self.name} at {self.base_url} ended before `done`",
                provider=self.name,
                model=model,
            )
        try:
            usage, answered = final.usage(), final.model(model)
        except ValueError as exc:
            raise self._error(exc, model) from exc
        yield StreamDone(
            ChatResponse(
                text="".join(text),
                tool_calls=tuple(calls),
                usage=usage,
                stop_reason=final.stop(bool(calls)),
                thinking="".join(thinking) or None,
                provider=self.name,
                model=answered,
            )
        )

    # --- embeddings --------------------------------------------------------------------------

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order, from ``/api/embed`` with the configured model.

        Use an embedding model (``nomic-embed-text``) in this provider's config.

        Raises:
            ProviderError: a subclass naming the server/model and what to do.
        """
        body: dict[str, Any] = {"model": self.model, "input": list(texts)}
        if self.config.keep_alive is not None:
            body["keep_alive"] = self.config.keep_alive
        try:
            response = await self._client.post("/api/embed", json=body)
            if not response.is_success:
                raise self._status_error(response, response.text, self.model)
            data = _object(response.json(), "an /api/embed answer")
            self._check_error_line(data, self.model)
            raw = data["embeddings"]
            if not isinstance(raw, list) or len(raw) != len(texts):
                raise ValueError(f"`embeddings` is not a list of {len(texts)} vectors")
            vectors = [[float(x) for x in vec] for vec in raw]
        except Exception as exc:
            raise self._error(exc, self.model) from exc
        if vectors:
            self._dimensions = len(vectors[0])
        return vectors

    async def aclose(self) -> None:
        """Close the HTTP connections (if a request made them). Idempotent."""
        if not self._closed:
            self._closed = True
            if self._client_instance is not None:
                await self._client_instance.aclose()


def _transport(httpx: Any, host: str) -> Any:
    """httpx's transport for ``host``. A plain-http server (a local Ollama) never has TLS, so
    no CA bundle is loaded for it (httpx loads one into every default transport: 1.2 MB of
    RSS at the first turn, for nothing); an https server is verified as usual."""
    if host.lower().startswith("http://"):
        import ssl

        unused = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # verifies, trusts nothing: never used
        return httpx.AsyncHTTPTransport(verify=unused)
    return httpx.AsyncHTTPTransport()

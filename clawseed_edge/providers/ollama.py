"""Ollama through the official ``ollama`` SDK (imported at the first request, not before).

Chat with native tools and NDJSON streaming (tool arguments arrive as a dict), thinking output,
``keep_alive`` and ``options`` (``num_ctx``, ``temperature``, ``num_predict``) from config,
embeddings through ``/api/embed``.

Many Ollama models cannot call tools. :meth:`OllamaProvider.probe` asks ``/api/show`` once for
the model's capabilities and caches them (a service probes in the background once it is ready;
``agent`` and ``chat`` before their first turn), after which
``capabilities.native_tools`` is False for models without the ``tools`` capability and the
engine describes tools in the prompt instead. Before the probe, native tools are assumed.
``[provider] tool_mode = "native"`` or ``"prompt"`` overrides what the probe finds.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from contextlib import aclosing
from typing import Any

from clawseed_edge.api.errors import (
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
    import_sdk,
    native_tools_for,
    request_model,
    require_sdk,
)
from .config import ProviderConfig
from .http_limits import ResponseLimits, bounded_transport
from .small_http import request_json

__all__ = ["OllamaProvider", "ollama_tool"]

DEFAULT_BASE_URL = "http://127.0.0.1:11434"
#: The capability probe waits at most this long (or ``timeout_s`` when shorter).
PROBE_TIMEOUT_S = 10.0


_KEPT_PROPERTY_KEYS = frozenset({"type", "items", "description", "enum"})


def ollama_tool(spec: ToolSpec) -> dict[str, Any]:
    """A tool spec in Ollama's shape, keeping what the SDK's tool model would drop.

    The ollama SDK validates tools with a model whose properties keep only ``type``, ``items``,
    ``description`` and ``enum``: ``minimum``/``maximum``, nested ``properties`` and the like
    vanish. They are folded into the property's description as JSON, so the model still reads
    them (the SecurityPolicy checks the values anyway).
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


class OllamaProvider:
    """A provider for a local (or remote) Ollama server.

    Args:
        config: ``base_url`` (default ``http://127.0.0.1:11434``), ``model``, ``timeout_s``,
            ``temperature``, ``max_tokens``, ``num_ctx``, ``keep_alive``, ``think``; an
            ``api_key``/``api_key_env`` is sent as a bearer token if set (Ollama behind a proxy).

    Raises (from every call): ProviderUnreachable (``ollama serve`` not running),
    ProviderModelNotFound (model not pulled: the message says ``ollama pull <model>``),
    ProviderTimeout, ProviderBadResponse, ProviderServerError.
    """

    def __init__(self, config: ProviderConfig) -> None:
        # The SDK must be installed (said now, at start), but it is imported at the first
        # request: an idle service does not carry pydantic and httpx (see small_http).
        require_sdk("ollama", extra="ollama", provider=config.name)
        self.config = config
        self.name = config.name
        self.model = config.model or "qwen2.5:3b"
        self.base_url = (config.base_url or DEFAULT_BASE_URL).rstrip("/")
        self._sdk: Any = None
        self._client_instance: Any = None
        self._capabilities: ProviderCapabilities | None = None
        self._model_capabilities: tuple[str, ...] | None = None
        self._dimensions: int | None = None
        self._closed = False

    @property
    def _ollama(self) -> Any:
        """The ollama SDK, imported on first use."""
        if self._sdk is None:
            self._sdk = import_sdk("ollama", extra="ollama", provider=self.name)
        return self._sdk

    def _headers(self) -> dict[str, str] | None:
        key = self.config.resolve_api_key(required=False)
        return {"Authorization": f"Bearer {key}"} if key else None

    @property
    def _client(self) -> Any:
        """The SDK's AsyncClient over a bounded transport, made at the first request."""
        if self._client_instance is None:
            ollama = self._ollama
            import httpx  # the SDK's own HTTP library; our transport bounds every answer

            config = self.config
            limits = ResponseLimits(
                config.max_response_bytes, config.deadline_s, self.name, self.model, self.base_url
            )
            self._client_instance = ollama.AsyncClient(
                host=self.base_url,
                timeout=config.timeout_s,
                headers=self._headers(),
                transport=bounded_transport(httpx, httpx.AsyncHTTPTransport(), limits),
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
        (:mod:`.small_http`), not the SDK: probing does not load the SDK into an idle process.

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
                f"{self.base_url}/api/show",
                method="POST",
                payload={"model": self.model},
                headers=self._headers(),
                timeout_s=timeout_s,
            )
            if response.status >= 400:
                detail = error_message_from_body(response.text)
                if response.status == 404 and "not found" in detail:
                    raise ProviderModelNotFound(
                        f"model '{self.model}' is not pulled: run `ollama pull {self.model}`",
                        status=404,
                        provider=self.name,
                        model=self.model,
                    )
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

    def _error(self, exc: BaseException, model: str) -> ProviderError:
        if isinstance(exc, ProviderError):
            return exc
        if isinstance(exc, self._ollama.ResponseError):
            status = exc.status_code
            detail = str(exc.error)
            kw: dict[str, Any] = {"provider": self.name, "model": model}
            if status == 404 and "not found" in detail:
                return ProviderModelNotFound(
                    f"model '{model}' is not pulled: run `ollama pull {model}`",
                    status=404,
                    **kw,
                )
            if "does not support tools" in detail and self.config.tool_mode == "auto":
                self._mark_no_tools()
                return ProviderError(
                    f"model '{model}' does not support tools (Ollama: {detail}): the engine "
                    "describes tools in the prompt from the next request; or pick a model "
                    "with tool support",
                    status=status,
                    **kw,
                )
            if status < 0:
                return ProviderServerError(
                    f"{self.name} at {self.base_url} failed while answering: {detail}", **kw
                )
            return error_for_status(
                status, detail, provider=self.name, model=model, base_url=self.base_url
            )
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

    def _kwargs(self, request: ChatRequest, *, stream: bool) -> dict[str, Any]:
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
        tools = [ollama_tool(t) for t in request.tools]
        kwargs: dict[str, Any] = {
            "model": request_model(request.model, self.model),
            "messages": [_message(m) for m in request.messages],
            "stream": stream,
            "options": options or None,
            "keep_alive": self.config.keep_alive,
            "think": self.config.think,
        }
        if tools:
            kwargs["tools"] = tools
        return kwargs

    @staticmethod
    def _calls(message: Any, start: int) -> list[ToolCall]:
        return [
            ToolCall(c.function.name, dict(c.function.arguments or {}), f"call_{start + i + 1}")
            for i, c in enumerate(message.tool_calls or ())
        ]

    @staticmethod
    def _stop(done_reason: str | None, has_calls: bool) -> StopReason:
        if has_calls:
            return StopReason.TOOL_USE
        if done_reason == "length":
            return StopReason.MAX_TOKENS
        return StopReason.END_TURN

    async def chat(self, request: ChatRequest) -> ChatResponse:
        """Answer one request (no streaming). Safe to cancel: the HTTP request is abandoned.

        Raises:
            ProviderError: a subclass naming the server/model and what to do.
        """
        kwargs = self._kwargs(request, stream=False)
        model = kwargs["model"]
        try:
            response = await self._client.chat(**kwargs)
            message = response.message
            calls = self._calls(message, 0)
            return ChatResponse(
                text=message.content or "",
                tool_calls=tuple(calls),
                usage=Usage(response.prompt_eval_count or 0, response.eval_count or 0),
                stop_reason=self._stop(response.done_reason, bool(calls)),
                thinking=message.thinking or None,
                provider=self.name,
                model=response.model or model,
            )
        except Exception as exc:
            raise self._error(exc, model) from exc

    def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        """Answer one request as events (NDJSON stream); the last is a StreamDone.

        Tool calls are yielded as soon as their chunk arrives (Ollama sends whole calls).

        Raises:
            ProviderStreamInterrupted: the stream broke after text was yielded.
            ProviderError: it failed before any text.
        """
        model = request_model(request.model, self.model)
        return guard_stream(self._stream(request), provider=self.name, model=model)

    async def _stream(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        kwargs = self._kwargs(request, stream=True)
        model = kwargs["model"]
        text: list[str] = []
        thinking: list[str] = []
        calls: list[ToolCall] = []
        final: Any = None
        try:
            parts = await self._client.chat(**kwargs)
            async with aclosing(parts):  # closes the HTTP response if our caller stops early
                async for part in parts:
                    message = part.message
                    if message.thinking:
                        thinking.append(message.thinking)
                        yield ThinkingDelta(message.thinking)
                    if message.content:
                        text.append(message.content)
                        yield TextDelta(message.content)
                    for call in self._calls(message, len(calls)):
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
        yield StreamDone(
            ChatResponse(
                text="".join(text),
                tool_calls=tuple(calls),
                usage=Usage(final.prompt_eval_count or 0, final.eval_count or 0),
                stop_reason=self._stop(final.done_reason, bool(calls)),
                thinking="".join(thinking) or None,
                provider=self.name,
                model=final.model or model,
            )
        )

    # --- embeddings --------------------------------------------------------------------------

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order, from ``/api/embed`` with the configured model.

        Use an embedding model (``nomic-embed-text``) in this provider's config.

        Raises:
            ProviderError: a subclass naming the server/model and what to do.
        """
        try:
            response = await self._client.embed(
                model=self.model, input=list(texts), keep_alive=self.config.keep_alive
            )
            vectors = [[float(x) for x in vec] for vec in response.embeddings]
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
                await self._client_instance.close()

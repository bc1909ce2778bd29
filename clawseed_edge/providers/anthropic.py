"""Anthropic through the official ``anthropic`` SDK (imported only when a provider is built).

Messages with native tools, SSE streaming (text deltas, ``input_json_delta`` pieces reassembled
into a call's arguments, thinking deltas), stop reasons and usage (cache reads included). The
system prompt is sent as one block marked ``cache_control: {"type": "ephemeral"}`` so that the
stable system prompt is cached between turns.

The SDK's own retries are turned off (``max_retries=0``): :class:`ReliableProvider` retries.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from clawseed_edge.api.errors import ProviderBadResponse, ProviderError
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
    Usage,
)

from ._common import (
    error_for_exception,
    error_for_status,
    guard_stream,
    import_sdk,
    native_tools_for,
    request_model,
    require_sdk,
)
from .config import ProviderConfig
from .http_limits import ResponseLimits, bounded_transport

__all__ = ["AnthropicProvider", "to_anthropic_messages"]

DEFAULT_MAX_TOKENS = 4096

_STOP = {
    "end_turn": StopReason.END_TURN,
    "tool_use": StopReason.TOOL_USE,
    "max_tokens": StopReason.MAX_TOKENS,
    "stop_sequence": StopReason.STOP_SEQUENCE,
}

_IMAGE_PREFIXES = {
    "iVBOR": "image/png",
    "/9j/": "image/jpeg",
    "R0lG": "image/gif",
    "UklGR": "image/webp",
}


def _media_type(data: str) -> str:
    for prefix, media in _IMAGE_PREFIXES.items():
        if data.startswith(prefix):
            return media
    return "image/png"


def _blocks(msg: ChatMessage) -> list[dict[str, Any]]:
    images = [
        {"type": "image", "source": {"type": "base64", "media_type": _media_type(i), "data": i}}
        for i in msg.images
    ]
    if msg.role == "tool":
        # A tool result may carry pictures (camera_snapshot): text and image blocks inside it.
        content: Any = [{"type": "text", "text": msg.content}, *images] if images else msg.content
        return [{"type": "tool_result", "tool_use_id": msg.tool_call_id or "", "content": content}]
    blocks: list[dict[str, Any]] = list(images)
    if msg.content:
        blocks.append({"type": "text", "text": msg.content})
    for i, call in enumerate(msg.tool_calls):
        blocks.append(
            {
                "type": "tool_use",
                "id": call.id or f"call_{i + 1}",
                "name": call.name,
                "input": dict(call.arguments),
            }
        )
    return blocks


def to_anthropic_messages(
    messages: tuple[ChatMessage, ...],
) -> tuple[str, list[dict[str, Any]]]:
    """Split our conversation into Anthropic's system text and alternating messages.

    System messages are joined into the system text; tool results become ``tool_result``
    blocks of a user message; consecutive messages of one role are merged.
    """
    system: list[str] = []
    out: list[dict[str, Any]] = []
    for msg in messages:
        if msg.role == "system":
            if msg.content:
                system.append(msg.content)
            continue
        role = "assistant" if msg.role == "assistant" else "user"
        blocks = _blocks(msg)
        if not blocks:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    return "\n\n".join(system), out


class AnthropicProvider:
    """A provider for Anthropic's Messages API.

    Args:
        config: ``model``, ``api_key``/``api_key_env`` (default ``ANTHROPIC_API_KEY``),
            ``base_url`` (default: the SDK's), ``timeout_s``, ``max_tokens`` (default 4096),
            ``temperature`` (sent only when set; newer Claude models reject non-default values
            with HTTP 400).

    Raises:
        ConfigInvalid: the anthropic SDK is not installed (names the extra to install).

    A missing key raises ProviderAuthFailed ("no API key: set ANTHROPIC_API_KEY") on the first
    request, not at construction, so that a fallback chain still starts.
    """

    def __init__(self, config: ProviderConfig) -> None:
        # Installed? Said now, at start. Imported at the first request: importing the SDK
        # costs tens of MB of RSS, which an idle service does not pay.
        require_sdk("anthropic", extra="anthropic", provider=config.name)
        self._sdk: Any = None
        self.config = config
        self.name = config.name
        self.model = config.model or "claude-sonnet-4-6"
        self.base_url = (config.base_url or "").rstrip("/") or "the Anthropic API"
        self._client: Any = None
        self._closed = False

    @property
    def _anthropic(self) -> Any:
        """The anthropic SDK, imported on first use."""
        if self._sdk is None:
            self._sdk = import_sdk("anthropic", extra="anthropic", provider=self.name)
        return self._sdk

    @property
    def capabilities(self) -> ProviderCapabilities:
        """Native tools (unless ``tool_mode = "prompt"``), vision, streaming; no embeddings."""
        return ProviderCapabilities(
            native_tools=native_tools_for(self.config.tool_mode, True),
            vision=True,
            streaming=True,
            embeddings=False,
        )

    async def probe(self) -> ProviderCapabilities:
        """The capabilities (fixed for this provider; present so every built-in has probe())."""
        return self.capabilities

    def _get_client(self) -> Any:
        if self._client is None:
            key = self.config.resolve_api_key(required=True)
            self._client = self._anthropic.AsyncAnthropic(
                api_key=key,
                base_url=self.config.base_url or None,
                timeout=self.config.timeout_s,
                max_retries=0,
                http_client=self._http_client(),
            )
        return self._client

    def _http_client(self) -> Any:
        """The SDK's default HTTP client class, over a transport that bounds every answer."""
        client_class = self._anthropic.DefaultAsyncHttpxClient
        # The SDK's HTTP library (httpx2 for anthropic 2.x, httpx before): the module of the
        # AsyncClient its default client derives from.
        base = next(c for c in client_class.__mro__ if c.__name__ == "AsyncClient")
        lib = importlib.import_module(base.__module__.split(".")[0])
        limits = ResponseLimits(
            self.config.max_response_bytes,
            self.config.deadline_s,
            self.name,
            self.model,
            self.base_url,
        )
        transport = bounded_transport(lib, lib.AsyncHTTPTransport(), limits)
        return client_class(transport=transport, timeout=self.config.timeout_s)

    def _params(self, request: ChatRequest, *, stream: bool) -> dict[str, Any]:
        system, messages = to_anthropic_messages(request.messages)
        params: dict[str, Any] = {
            "model": request_model(request.model, self.model),
            "max_tokens": request.max_tokens or self.config.max_tokens or DEFAULT_MAX_TOKENS,
            "messages": messages,
            "stream": stream,
        }
        if system:
            params["system"] = [
                {"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}
            ]
        if request.tools:
            params["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": dict(t.parameters)}
                for t in request.tools
            ]
        temperature = (
            request.temperature if request.temperature is not None else self.config.temperature
        )
        if temperature is not None:
            # anthropic>=1 removed sampling parameters from create()'s signature; the API still
            # takes them on models that allow sampling, so they go in extra_body, only when set.
            params["extra_body"] = {"temperature": temperature}
        return params

    def _error(self, exc: BaseException, model: str) -> ProviderError:
        if isinstance(exc, ProviderError):
            return exc
        sdk = self._anthropic
        common = {"provider": self.name, "model": model, "base_url": self.base_url}
        if isinstance(exc, sdk.APIStatusError):
            body = exc.body
            text = json.dumps(body) if isinstance(body, (dict, list)) else str(exc.message)
            return error_for_status(
                exc.status_code,
                text,
                key_env=self.config.api_key_env,
                retry_after=exc.response.headers.get("retry-after"),
                **common,
            )
        if isinstance(exc, sdk.APITimeoutError):
            exc = TimeoutError(str(exc))
        elif isinstance(exc, sdk.APIResponseValidationError):
            exc = ValueError(str(exc))
        elif isinstance(exc, sdk.APIConnectionError) and exc.__cause__ is not None:
            exc = exc.__cause__
        hint = (
            "check this machine's network connection (and a proxy, if one is needed)"
            if "://" not in self.base_url
            else "check provider.base_url and that the server is running"
        )
        return error_for_exception(
            exc, timeout_s=self.config.timeout_s, unreachable_hint=hint, **common
        )

    @staticmethod
    def _usage(usage: Any) -> Usage:
        if usage is None:
            return Usage()
        return Usage(
            int(getattr(usage, "input_tokens", 0) or 0),
            int(getattr(usage, "output_tokens", 0) or 0),
            int(getattr(usage, "cache_read_input_tokens", 0) or 0),
        )

    async def chat(self, request: ChatRequest) -> ChatResponse:
        """Answer one request (no streaming). Safe to cancel: the HTTP request is abandoned.

        Raises:
            ProviderError: a subclass naming the model and what to do.
        """
        params = self._params(request, stream=False)
        model = params["model"]
        try:
            message = await self._get_client().messages.create(**params)
            text: list[str] = []
            thinking: list[str] = []
            calls: list[ToolCall] = []
            for block in message.content:
                kind = getattr(block, "type", None)
                if kind == "text":
                    text.append(block.text)
                elif kind == "thinking":
                    thinking.append(block.thinking)
                elif kind == "tool_use":
                    calls.append(ToolCall(block.name, dict(block.input or {}), block.id))
            return ChatResponse(
                text="".join(text),
                tool_calls=tuple(calls),
                usage=self._usage(message.usage),
                stop_reason=_STOP.get(message.stop_reason or "", StopReason.OTHER),
                thinking="".join(thinking) or None,
                provider=self.name,
                model=message.model or model,
            )
        except Exception as exc:
            raise self._error(exc, model) from exc

    def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        """Answer one request as SSE events; the last is a StreamDone.

        A tool call is yielded when its content block stops (its JSON arguments complete).

        Raises:
            ProviderStreamInterrupted: the stream broke after text was yielded.
            ProviderError: it failed before any text.
        """
        model = request_model(request.model, self.model)
        return guard_stream(self._stream(request), provider=self.name, model=model)

    async def _stream(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        params = self._params(request, stream=True)
        model = params["model"]
        text: list[str] = []
        thinking: list[str] = []
        calls: list[ToolCall] = []
        pending: dict[int, dict[str, Any]] = {}
        usage = Usage()
        stop: str | None = None
        stopped = False
        try:
            events = await self._get_client().messages.create(**params)
            async with events:  # closes the HTTP response if our caller stops early
                async for event in events:
                    kind = event.type
                    if kind == "message_start":
                        usage = self._usage(event.message.usage)
                        model = event.message.model or model
                    elif kind == "content_block_start":
                        block = event.content_block
                        if block.type == "tool_use":
                            pending[event.index] = {"id": block.id, "name": block.name, "json": ""}
                    elif kind == "content_block_delta":
                        delta = event.delta
                        if delta.type == "text_delta":
                            text.append(delta.text)
                            yield TextDelta(delta.text)
                        elif delta.type == "thinking_delta":
                            thinking.append(delta.thinking)
                            yield ThinkingDelta(delta.thinking)
                        elif delta.type == "input_json_delta" and event.index in pending:
                            pending[event.index]["json"] += delta.partial_json
                    elif kind == "content_block_stop" and event.index in pending:
                        slot = pending.pop(event.index)
                        call = ToolCall(slot["name"], self._arguments(slot, model), slot["id"])
                        calls.append(call)
                        yield ToolCallReady(call)
                    elif kind == "message_delta":
                        stop = event.delta.stop_reason or stop
                        out = getattr(event.usage, "output_tokens", None)
                        cached = getattr(event.usage, "cache_read_input_tokens", None)
                        usage = Usage(
                            usage.input_tokens,
                            int(out) if out is not None else usage.output_tokens,
                            int(cached) if cached is not None else usage.cached_input_tokens,
                        )
                    elif kind == "message_stop":
                        stopped = True
        except Exception as exc:
            raise self._error(exc, model) from exc
        if not stopped:
            raise ProviderBadResponse(
                f"the stream from {self.name} at {self.base_url} ended before message_stop",
                provider=self.name,
                model=model,
            )
        yield StreamDone(
            ChatResponse(
                text="".join(text),
                tool_calls=tuple(calls),
                usage=usage,
                stop_reason=_STOP.get(stop or "", StopReason.OTHER),
                thinking="".join(thinking) or None,
                provider=self.name,
                model=model,
            )
        )

    def _arguments(self, slot: dict[str, Any], model: str) -> dict[str, Any]:
        raw = slot["json"].strip()
        if not raw:
            return {}
        try:
            value = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            raise ProviderBadResponse(
                f"{self.name} sent tool call '{slot['name']}' with arguments that are not JSON "
                f"({exc})",
                provider=self.name,
                model=model,
            ) from exc
        return value if isinstance(value, dict) else {"value": value}

    async def aclose(self) -> None:
        """Close the HTTP connections. Idempotent."""
        if not self._closed:
            self._closed = True
            if self._client is not None:
                await self._client.close()

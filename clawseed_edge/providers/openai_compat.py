"""OpenAI-compatible chat and embeddings over httpx (imported at the first request).

One client for every server that speaks ``/v1/chat/completions``: OpenAI, Groq, DeepSeek,
OpenRouter, Gemini's OpenAI-compatible endpoint, llama.cpp's server, vLLM, LM Studio. The
``base_url`` includes the version prefix (``http://127.0.0.1:8080/v1``).

Tool-call arguments arrive as a JSON *string* (streamed in pieces and reassembled here); a
string that is not a JSON object becomes a call whose arguments are
``{"_invalid_arguments": <the text>, "_error": <why>}`` so that the engine can answer the model
with a clear error result instead of crashing the turn.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any

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
    ToolSpec,
    Usage,
)

from ._common import (
    error_for_exception,
    error_for_status,
    error_message_from_body,
    guard_stream,
    native_tools_for,
    refuses_tools,
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

if TYPE_CHECKING:
    import httpx

__all__ = ["OpenAICompatProvider", "decode_arguments"]

log = logging.getLogger(__name__)

_STOP = {
    "stop": StopReason.END_TURN,
    "tool_calls": StopReason.TOOL_USE,
    "function_call": StopReason.TOOL_USE,
    "length": StopReason.MAX_TOKENS,
    "content_filter": StopReason.OTHER,
}


#: Characters of invalid tool-call arguments kept (they go back to the model and to history).
INVALID_ARGUMENTS_PREVIEW = 1000


def decode_arguments(name: str, text: str) -> dict[str, Any]:
    """A tool call's JSON-string arguments as a dict; invalid text is kept (a bounded
    preview, ``INVALID_ARGUMENTS_PREVIEW`` characters), with the reason."""
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except RecursionError:
        return _invalid(name, text, "are nested too deeply: send a flat JSON object")
    except ValueError as exc:
        return _invalid(name, text, f"are not valid JSON ({exc}): send a JSON object")
    if not isinstance(value, dict):
        return _invalid(name, text, "are not a JSON object: send an object")
    return value


def _invalid(name: str, text: str, why: str) -> dict[str, Any]:
    preview = text[:INVALID_ARGUMENTS_PREVIEW]
    if len(text) > INVALID_ARGUMENTS_PREVIEW:
        preview += f" … [{len(text) - INVALID_ARGUMENTS_PREVIEW} more characters not kept]"
    return {"_invalid_arguments": preview, "_error": f"the arguments of tool '{name}' {why}"}


def _image_part(img: str) -> dict[str, Any]:
    media = "image/jpeg" if img.startswith("/9j/") else "image/png"
    return {"type": "image_url", "image_url": {"url": f"data:{media};base64,{img}"}}


def _messages(messages: tuple[ChatMessage, ...]) -> list[dict[str, Any]]:
    """The wire messages; a tool result's pictures follow its run of tool messages as a user
    message (a tool message's content is text only on OpenAI-compatible servers)."""
    out: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []
    for msg in messages:
        if pending and msg.role != "tool":
            out.append({"role": "user", "content": pending})
            pending = []
        out.append(_message(msg))
        if msg.role == "tool" and msg.images:
            pending.append(
                {"type": "text", "text": f"The picture(s) {msg.name or 'a tool'} returned:"}
            )
            pending += [_image_part(img) for img in msg.images]
    if pending:
        out.append({"role": "user", "content": pending})
    return out


def _message(msg: ChatMessage) -> dict[str, Any]:
    if msg.role == "tool":
        return {"role": "tool", "tool_call_id": msg.tool_call_id or "", "content": msg.content}
    out: dict[str, Any] = {"role": msg.role, "content": msg.content}
    if msg.images:
        parts: list[dict[str, Any]] = [{"type": "text", "text": msg.content}]
        parts += [_image_part(img) for img in msg.images]
        out["content"] = parts
    if msg.tool_calls:
        out["content"] = msg.content or None
        out["tool_calls"] = [
            {
                "id": call.id or f"call_{i + 1}",
                "type": "function",
                "function": {"name": call.name, "arguments": json.dumps(dict(call.arguments))},
            }
            for i, call in enumerate(msg.tool_calls)
        ]
    return out


def _tool(spec: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": spec.name,
            "description": spec.description,
            "parameters": dict(spec.parameters),
        },
    }


def _usage(data: Any) -> Usage:
    if not isinstance(data, dict):
        return Usage()
    details = data.get("prompt_tokens_details") or {}
    return Usage(
        int(data.get("prompt_tokens") or 0),
        int(data.get("completion_tokens") or 0),
        int(details.get("cached_tokens") or 0) if isinstance(details, dict) else 0,
    )


class OpenAICompatProvider:
    """A provider for any OpenAI-compatible ``/v1/chat/completions`` server.

    Args:
        config: ``base_url`` (with ``/v1``), ``model``, ``api_key``/``api_key_env`` (a key is
            required only when ``api_key_env`` is set; local servers need none),
            ``timeout_s``, ``deadline_s`` and ``max_response_bytes`` (see
            :mod:`.http_limits`), ``temperature``, ``max_tokens``, ``tool_mode``.
        transport: An httpx transport to use instead of the network (tests).

    Errors are :class:`~clawseed_edge.api.errors.ProviderError` subclasses; a missing key
    raises ProviderAuthFailed on the first request, not at construction.
    """

    def __init__(
        self, config: ProviderConfig, *, transport: httpx.AsyncBaseTransport | None = None
    ) -> None:
        self.config = config
        self.name = config.name
        self.model = config.model or "default"
        self.base_url = (config.base_url or "http://127.0.0.1:8080/v1").rstrip("/")
        self._transport = transport
        self._client_instance: httpx.AsyncClient | None = None
        self._dimensions: int | None = None
        self._tools_detected = True  # tool_mode auto: native until found otherwise
        # Which response_format the server took (found at the first constrained request).
        self._formats: list[str] = ["json_schema", "json_object"]
        self._probed = False
        self._closed = False

    @property
    def _client(self) -> httpx.AsyncClient:
        """The HTTP client, made at the first request: an idle service does not load httpx."""
        if self._client_instance is None:
            import httpx

            config = self.config
            limits = ResponseLimits(
                config.max_response_bytes, config.deadline_s, self.name, self.model, self.base_url
            )
            transport = self._transport or httpx.AsyncHTTPTransport()
            self._client_instance = httpx.AsyncClient(
                base_url=self.base_url,
                timeout=config.timeout_s,
                transport=bounded_transport(httpx, transport, limits),
            )
        return self._client_instance

    @property
    def capabilities(self) -> ProviderCapabilities:
        """Streaming and embeddings; vision is assumed (servers differ); native tools as
        ``tool_mode`` says (``auto``: what :meth:`probe` or a refusal found, native before)."""
        native = native_tools_for(self.config.tool_mode, self._tools_detected)
        return ProviderCapabilities(
            native_tools=native, vision=True, streaming=True, embeddings=True
        )

    @property
    def constrained_output(self) -> bool:
        """Whether requests with tools ask for a reply that can only be an answer or a call
        (``[provider] constrained``; off for good once the server refused every form)."""
        return bool(self._formats) and constrained_for(
            self.config.constrained,
            base_url=self.base_url,
            model=self.model,
            native_tools=self._tools_detected,
        )

    @property
    def local_small_model(self) -> bool:
        """A model of at most 2B parameters on a local server (offered fewer tools)."""
        return is_local_url(self.base_url) and is_small_model(self.model)

    async def probe(self) -> ProviderCapabilities:
        """With ``tool_mode = "auto"``, ask a llama.cpp server whether its model has a tool
        template; returns the capabilities.

        llama.cpp's ``GET /props`` (beside ``/v1``) gives the chat template, and newer servers
        ``chat_template_caps.supports_tools``. A server without ``/props`` (OpenAI, vLLM, LM
        Studio ...) keeps native tools; if it then refuses them, :meth:`chat` switches to
        prompt-guided tools. Never raises: a failed probe changes nothing (logged).
        """
        if self.config.tool_mode == "auto" and not self._probed:
            self._probed = True
            found = await self._template_has_tools()
            if found is not None:
                self._tools_detected = found
        return self.capabilities

    async def _template_has_tools(self) -> bool | None:
        import http.client

        from .small_http import request_json

        root = self.base_url.removesuffix("/v1")
        try:
            # Through the standard library, not httpx: the probe runs in an idle service.
            response = await request_json(
                root + "/props",
                headers=self._headers(),
                timeout_s=min(self.config.timeout_s, 10.0),
                max_bytes=self.config.max_response_bytes,
            )
            if response.status != 200:
                return None
            props = response.json()
        except (OSError, http.client.HTTPException, ProviderError, ValueError) as exc:
            log.debug("%s: no /props at %s (%s); keeping native tools", self.name, root, exc)
            return None
        if not isinstance(props, dict):
            return None
        caps = props.get("chat_template_caps")
        if isinstance(caps, dict) and isinstance(caps.get("supports_tools"), bool):
            return bool(caps["supports_tools"])
        template = props.get("chat_template")
        if isinstance(template, str) and template:
            return "tools" in template
        return None

    @property
    def embedding_dimensions(self) -> int | None:
        """The vector length, known after the first :meth:`embed`."""
        return self._dimensions

    def _headers(self) -> dict[str, str]:
        key = self.config.resolve_api_key(required=bool(self.config.api_key_env))
        return {"Authorization": f"Bearer {key}"} if key else {}

    def _body(self, request: ChatRequest, *, stream: bool) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": request_model(request.model, self.model),
            "messages": _messages(request.messages),
        }
        if request.tools:
            body["tools"] = [_tool(t) for t in request.tools]
        temperature = (
            request.temperature if request.temperature is not None else self.config.temperature
        )
        if temperature is not None:
            body["temperature"] = temperature
        max_tokens = request.max_tokens or self.config.max_tokens
        if max_tokens:
            body["max_tokens"] = max_tokens
        if stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        return body

    def _error(self, exc: BaseException, model: str) -> ProviderError:
        return error_for_exception(
            exc,
            provider=self.name,
            model=model,
            base_url=self.base_url,
            timeout_s=self.config.timeout_s,
        )

    def _status_error(self, response: httpx.Response, body: str, model: str) -> ProviderError:
        detail = error_message_from_body(body)
        if self.config.tool_mode == "auto" and refuses_tools(response.status_code, detail):
            self._tools_detected = False
            return ProviderError(
                f"{self.name} at {self.base_url} refused native tools for model '{model}' "
                f"(HTTP {response.status_code}: {detail}): the engine describes tools in the "
                'prompt from the next request; set [provider] tool_mode = "prompt" to start so',
                provider=self.name,
                model=model,
                status=response.status_code,
            )
        return error_for_status(
            response.status_code,
            body,
            provider=self.name,
            model=model,
            base_url=self.base_url,
            key_env=self.config.api_key_env,
            retry_after=response.headers.get("retry-after"),
        )

    async def chat(self, request: ChatRequest) -> ChatResponse:
        """Answer one request (no streaming). Safe to cancel: the HTTP request is abandoned.

        Raises:
            ProviderError: a subclass naming the server and what to do.
        """
        if request.tools and self.constrained_output:
            constrained = await self._constrained_chat(request)
            if constrained is not None:
                return constrained
        body = self._body(request, stream=False)
        model = body["model"]
        try:
            response = await self._client.post(
                "/chat/completions", json=body, headers=self._headers()
            )
            if response.status_code >= 400:
                raise self._status_error(response, response.text, model)
            data = response.json()
            choice = data["choices"][0]
            message = choice["message"]
            calls = tuple(
                ToolCall(
                    c["function"]["name"],
                    decode_arguments(c["function"]["name"], c["function"].get("arguments") or ""),
                    c.get("id") or f"call_{i + 1}",
                )
                for i, c in enumerate(message.get("tool_calls") or ())
            )
            thinking = message.get("reasoning_content") or message.get("reasoning")
            return ChatResponse(
                text=message.get("content") or "",
                tool_calls=calls,
                usage=_usage(data.get("usage")),
                stop_reason=_STOP.get(choice.get("finish_reason") or "stop", StopReason.OTHER),
                thinking=thinking or None,
                provider=self.name,
                model=data.get("model") or model,
            )
        except ProviderError:
            raise
        except Exception as exc:
            raise self._error(exc, model) from exc

    async def _constrained_chat(self, request: ChatRequest) -> ChatResponse | None:
        """One constrained request (asked again once if the reply does not parse); None when
        the server takes no response_format at all (then the plain request is sent).

        Raises:
            ProviderBadResponse: The reply did not parse twice ("the model did not answer").
            ProviderError: Any other failure of the server.
        """
        body = self._body(request, stream=False)
        model = body["model"]
        body.pop("tools", None)
        with_instruction(body["messages"], request.tools)
        schema = reply_schema(request.tools)

        async def post() -> tuple[str, Usage, str] | None:
            data = await self._post_constrained(body, schema, model)
            if data is None:
                return None
            try:
                content = str(data["choices"][0]["message"].get("content") or "")
            except (LookupError, TypeError, AttributeError):
                content = ""  # not the protocol: read as a reply that did not parse
            return content, _usage(data.get("usage")), str(data.get("model") or model)

        return await ask_twice(post, request.tools, self.name, model)

    async def _post_constrained(
        self, body: dict[str, Any], schema: dict[str, Any], model: str
    ) -> dict[str, Any] | None:
        """The server's JSON for ``body`` with the first response_format it takes; a form it
        refuses is not tried again (None: it took none)."""
        while self._formats:
            form = self._formats[0]
            body["response_format"] = (
                {"type": "json_schema", "json_schema": {"name": "reply", "schema": schema}}
                if form == "json_schema"
                else {"type": "json_object", "schema": schema}  # llama.cpp's own form
            )
            try:
                response = await self._client.post(
                    "/chat/completions", json=body, headers=self._headers()
                )
            except Exception as exc:
                raise self._error(exc, model) from exc
            if response.status_code < 400:
                data: dict[str, Any] = response.json()
                return data
            detail = error_message_from_body(response.text)
            if not refuses_format(response.status_code, detail):
                raise self._status_error(response, response.text, model)
            log.info("%s refused response_format %s (%s)", self.name, form, detail[:200])
            self._formats.pop(0)
        return None

    def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        """Answer one request as SSE events; the last is a StreamDone.

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
        calls: dict[int, dict[str, str]] = {}
        usage = Usage()
        finish: str | None = None
        answered_model = model
        try:
            async with self._client.stream(
                "POST", "/chat/completions", json=body, headers=self._headers()
            ) as response:
                if response.status_code >= 400:
                    raw = (await response.aread()).decode("utf-8", "replace")
                    raise self._status_error(response, raw, model)
                done = False
                async for line in response.aiter_lines():
                    if not line.startswith("data:"):
                        if line.strip() and not line.startswith((":", "event:", "id:", "retry:")):
                            raise ProviderBadResponse(
                                f"{self.name} at {self.base_url} sent a line that is not "
                                f"server-sent events: {line[:80]!r}",
                                provider=self.name,
                                model=model,
                            )
                        continue
                    payload = line[5:].strip()
                    if payload == "[DONE]":
                        done = True
                        break
                    chunk = json.loads(payload)
                    if "error" in chunk:
                        raise ProviderError(
                            f"{self.name} at {self.base_url} reported an error mid-stream: "
                            f"{chunk['error']}",
                            provider=self.name,
                            model=model,
                        )
                    answered_model = chunk.get("model") or answered_model
                    if chunk.get("usage"):
                        usage = _usage(chunk["usage"])
                    for choice in chunk.get("choices") or ():
                        delta = choice.get("delta") or {}
                        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
                        if reasoning:
                            thinking.append(reasoning)
                            yield ThinkingDelta(reasoning)
                        if delta.get("content"):
                            text.append(delta["content"])
                            yield TextDelta(delta["content"])
                        for part in delta.get("tool_calls") or ():
                            slot = calls.setdefault(
                                int(part.get("index", len(calls))),
                                {"id": "", "name": "", "arguments": ""},
                            )
                            fn = part.get("function") or {}
                            slot["id"] = part.get("id") or slot["id"]
                            slot["name"] += fn.get("name") or ""
                            slot["arguments"] += fn.get("arguments") or ""
                        finish = choice.get("finish_reason") or finish
                if not done and finish is None:
                    raise ProviderBadResponse(
                        f"the stream from {self.name} at {self.base_url} ended without "
                        "`data: [DONE]`",
                        provider=self.name,
                        model=model,
                    )
        except ProviderError:
            raise
        except Exception as exc:
            raise self._error(exc, model) from exc
        tool_calls = []
        for index in sorted(calls):
            slot = calls[index]
            call = ToolCall(
                slot["name"],
                decode_arguments(slot["name"], slot["arguments"]),
                slot["id"] or f"call_{index + 1}",
            )
            tool_calls.append(call)
            yield ToolCallReady(call)
        yield StreamDone(
            ChatResponse(
                text="".join(text),
                tool_calls=tuple(tool_calls),
                usage=usage,
                stop_reason=_STOP.get(finish or "stop", StopReason.OTHER),
                thinking="".join(thinking) or None,
                provider=self.name,
                model=answered_model,
            )
        )

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order, from ``/v1/embeddings``.

        Raises:
            ProviderError: a subclass naming the server and what to do.
        """
        model = self.model
        try:
            response = await self._client.post(
                "/embeddings",
                json={"model": model, "input": list(texts)},
                headers=self._headers(),
            )
            if response.status_code >= 400:
                raise self._status_error(response, response.text, model)
            items = sorted(response.json()["data"], key=lambda d: d.get("index", 0))
            vectors = [[float(x) for x in item["embedding"]] for item in items]
        except ProviderError:
            raise
        except Exception as exc:
            raise self._error(exc, model) from exc
        if vectors:
            self._dimensions = len(vectors[0])
        return vectors

    async def aclose(self) -> None:
        """Close the HTTP connections (if a request made them). Idempotent."""
        if not self._closed:
            self._closed = True
            if self._client_instance is not None:
                await self._client_instance.aclose()

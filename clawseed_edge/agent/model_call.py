"""One request to the model, for the turn engine: plain or streamed, observed, errors sorted.

Errors: a :class:`~clawseed_edge.api.ProviderError` passes through unchanged (the provider
already said what happened and whether to retry). A stream that breaks with an I/O error after
text was shown becomes :class:`~clawseed_edge.api.ProviderStreamInterrupted` (never replayed).
Anything else is a bug (a plugin's ``TypeError``, an ``AttributeError``): it is logged with its
traceback and raised as it is, so the turn reports an internal error instead of a retryable
bad response that would send the same bug round a retry loop.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from clawseed_edge.api import (
    ChatRequest,
    ChatResponse,
    ChunkEvent,
    LlmRequest,
    LlmResponse,
    ObserverEvent,
    Provider,
    ProviderError,
    ProviderStreamInterrupted,
    StreamDone,
    TextDelta,
    ThinkingDelta,
    ThinkingEvent,
    ToolCall,
    ToolCallReady,
)

__all__ = ["ask_model"]

log = logging.getLogger(__name__)

Emit = Callable[[object], None]
Record = Callable[[ObserverEvent], None]

#: What a broken connection looks like when an SDK lets it through unmapped.
_IO_ERRORS = (OSError, EOFError, TimeoutError)


async def ask_model(
    provider: Provider,
    request: ChatRequest,
    *,
    stream: bool,
    live_text: bool,
    emit: Emit,
    record: Record,
) -> ChatResponse:
    """Ask ``provider`` once, emitting thinking (and, when ``live_text``, text) as it arrives.

    Args:
        provider: The model.
        request: The messages and tool specs.
        stream: Use ``provider.stream`` (the provider can stream).
        live_text: Emit text deltas as ``ChunkEvent`` while they arrive (native tool calling;
            prompt-guided text holds call markup and is shown after parsing instead).
        emit: Receives turn events.
        record: Receives observer events (``LlmRequest``, ``LlmResponse``).

    Raises:
        ProviderError: The provider failed (its own error).
        Exception: A bug in the provider (logged, raised unchanged).

    Cancel-safe: cancelling closes the stream and raises ``CancelledError``.
    """
    record(LlmRequest(provider.name, provider.model, len(request.messages), len(request.tools)))
    started = time.perf_counter()
    try:
        if stream:
            response = await _stream(provider, request, live_text, emit)
        else:
            response = await provider.chat(request)
            if response.thinking:
                emit(ThinkingEvent(response.thinking))
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        latency = (time.perf_counter() - started) * 1000.0
        record(LlmResponse(provider.name, provider.model, latency, success=False, error=str(exc)))
        if not isinstance(exc, ProviderError):
            # Let bugs be bugs: only the provider's own errors are provider errors.
            log.error(
                "provider %r raised %s (a bug in the provider)",
                provider.name,
                type(exc).__name__,
                exc_info=exc,
            )
        raise
    latency = (time.perf_counter() - started) * 1000.0
    record(
        LlmResponse(
            response.provider or provider.name,
            response.model or provider.model,
            latency,
            response.usage,
        )
    )
    return response


async def _stream(
    provider: Provider, request: ChatRequest, live_text: bool, emit: Emit
) -> ChatResponse:
    text: list[str] = []
    calls: list[ToolCall] = []
    saw_thinking = False
    stream = provider.stream(request)
    try:
        async for event in stream:
            if isinstance(event, TextDelta):
                text.append(event.text)
                if live_text and event.text:
                    emit(ChunkEvent(event.text))
            elif isinstance(event, ThinkingDelta):
                saw_thinking = True
                emit(ThinkingEvent(event.text))
            elif isinstance(event, ToolCallReady):
                calls.append(event.call)
            elif isinstance(event, StreamDone):
                if event.response.thinking and not saw_thinking:
                    emit(ThinkingEvent(event.response.thinking))
                return event.response
    except _IO_ERRORS as exc:
        if not text:
            raise
        # The user already saw part of the answer: say so rather than replay it.
        raise ProviderStreamInterrupted(
            f"the stream from {provider.name!r} broke after text was shown "
            f"({type(exc).__name__}: {exc}); ask again",
            provider=provider.name,
            model=provider.model,
        ) from exc
    finally:
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()
    # A stream that ended without StreamDone: assemble what arrived.
    return ChatResponse(text="".join(text), tool_calls=tuple(calls))

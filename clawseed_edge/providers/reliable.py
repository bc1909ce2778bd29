"""Bounded retries with backoff, then the next provider in a fallback chain.

Retried (up to ``max_retries`` times per provider, exponential backoff with jitter): errors with
``retryable=True`` — unreachable, timeout, 429 (honouring ``Retry-After`` up to ``max_delay_s``),
5xx, garbage answers. Not retried: 4xx that cannot succeed when sent again (auth, model not
found, context too long, other refusals).

After a provider gives up, the next one is tried when that can help: retryable errors, a
rejected or missing key, a model the server does not have, a prompt too long for its context.
A plain refusal (HTTP 400 of another kind) is raised at once: the next provider would refuse
the same request.

Streams: once text or a tool call has been yielded to the caller, a failure raises
:class:`~clawseed_edge.api.errors.ProviderStreamInterrupted`; the turn is never replayed
silently. Before anything was yielded, a stream is retried and falls back like ``chat``.

Each ChatResponse carries the ``provider`` and ``model`` that actually answered. A model named
in ``ChatRequest.model`` is sent to the primary only; fallbacks answer with their own model.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import random as _random
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import aclosing
from dataclasses import replace
from typing import Any

from clawseed_edge.api.errors import (
    ProviderAuthFailed,
    ProviderContextTooLong,
    ProviderError,
    ProviderModelNotFound,
    ProviderRateLimited,
    ProviderStreamInterrupted,
)
from clawseed_edge.api.events import StreamDone, StreamEvent, TextDelta, ToolCallReady
from clawseed_edge.api.protocols import Provider, ProviderCapabilities
from clawseed_edge.api.types import ChatRequest, ChatResponse
from clawseed_edge.api.urls import redact_url

__all__ = ["ReliableProvider"]

log = logging.getLogger(__name__)

_FALLBACK_ON = (ProviderAuthFailed, ProviderModelNotFound, ProviderContextTooLong)


async def probe_quietly(provider: Provider) -> None:
    """Call ``provider.probe()`` if it has one; a ProviderError is logged, not raised.

    At INFO, not WARNING: the first request reports the same error with its advice, so a
    one-shot ``agent`` would say it twice; the service logs at INFO, so its journal keeps it.
    """
    probe = getattr(provider, "probe", None)
    if probe is None:
        return
    try:
        await probe()
    except ProviderError as exc:
        log.info("could not probe provider %s (model %s): %s", provider.name, provider.model, exc)


class ReliableProvider:
    """A chain of providers with retries: the first is the primary, the rest are fallbacks.

    Args:
        providers: The chain, primary first (at least one).
        max_retries: Retries per provider on retryable errors (0: try each provider once).
        base_delay_s: First backoff delay in seconds; doubles each retry.
        max_delay_s: Upper bound of one delay; a ``Retry-After`` longer than this moves on to
            the next provider instead of waiting.
        sleep: The coroutine used to wait (inject a fake in tests).
        random: Returns a float in [0, 1) for jitter (inject a fixed one in tests).

    ``name``/``model``/``capabilities`` are the primary's. Caveat: when a fallback answers, it
    may lack a capability the primary has (native tools, vision); the engine sized the request
    for the primary.
    """

    def __init__(
        self,
        providers: Sequence[Provider],
        *,
        max_retries: int = 2,
        base_delay_s: float = 0.5,
        max_delay_s: float = 8.0,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        random: Callable[[], float] = _random.random,
    ) -> None:
        if not providers:
            raise ValueError("ReliableProvider needs at least one provider")
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}")
        self.providers = tuple(providers)
        self.max_retries = max_retries
        self.base_delay_s = base_delay_s
        self.max_delay_s = max_delay_s
        self._sleep = sleep
        self._random = random
        self.name = self.providers[0].name
        self.model = self.providers[0].model

    @property
    def capabilities(self) -> ProviderCapabilities:
        """The primary's capabilities (see the class caveat)."""
        return self.providers[0].capabilities

    @property
    def constrained_output(self) -> bool:
        """The primary's: whether it constrains replies to an answer or a call."""
        return bool(getattr(self.providers[0], "constrained_output", False))

    @property
    def local_small_model(self) -> bool:
        """The primary's: whether it runs a small model on a local server."""
        return bool(getattr(self.providers[0], "local_small_model", False))

    async def probe(self) -> ProviderCapabilities:
        """Run ``probe()`` on every provider that has one; returns the primary's capabilities.

        A provider that cannot be probed (server down, model not pulled) is logged as a warning
        and left for the first request to report, so that startup does not fail.
        """
        for provider in self.providers:
            await probe_quietly(provider)
        return self.capabilities

    # --- policy ------------------------------------------------------------------------------

    def _delay(self, attempt: int, error: ProviderError) -> float | None:
        """Seconds to wait before retry number ``attempt + 1``; None: do not retry."""
        if not error.retryable or attempt >= self.max_retries:
            return None
        if isinstance(error, ProviderRateLimited) and error.retry_after is not None:
            if error.retry_after > self.max_delay_s:
                return None
            return float(error.retry_after)
        backoff = min(self.max_delay_s, self.base_delay_s * (2**attempt))
        return float(backoff * (0.5 + 0.5 * self._random()))

    @staticmethod
    def _can_fall_back(error: ProviderError) -> bool:
        if isinstance(error, ProviderStreamInterrupted):
            return False
        return error.retryable or isinstance(error, _FALLBACK_ON)

    def _give_up(self, errors: list[tuple[Provider, ProviderError]]) -> ProviderError:
        last = errors[-1][1]
        if len(errors) == 1 or len({id(p) for p, _ in errors}) == 1:
            return last
        seen: list[str] = []
        for provider, error in errors:
            line = f"{provider.name} ({provider.model}): {error}"
            if line not in seen:
                seen.append(line)
        combined = copy.copy(last)
        # The parts are ProviderErrors (redacted when made); the whole passes the rule again
        # because ``args`` is set here, not by the constructor.
        combined.args = (redact_url("no provider could answer: " + "; ".join(seen)),)
        return combined

    @staticmethod
    def _request_for(index: int, request: ChatRequest) -> ChatRequest:
        """The request for provider ``index``: a model named by the request is the primary's
        (a fallback on another server would not have it), so fallbacks use their own."""
        if index == 0 or request.model is None:
            return request
        return replace(request, model=None)

    @staticmethod
    def _stamp(response: ChatResponse, provider: Provider) -> ChatResponse:
        return replace(
            response,
            provider=response.provider or provider.name,
            model=response.model or provider.model,
        )

    # --- chat --------------------------------------------------------------------------------

    async def chat(self, request: ChatRequest) -> ChatResponse:
        """Answer with the first provider that can, retrying retryable errors.

        Safe to cancel (also during a backoff wait).

        Raises:
            ProviderError: the last provider's error (its message lists every provider's
                failure when several were tried).
        """
        errors: list[tuple[Provider, ProviderError]] = []
        for index, provider in enumerate(self.providers):
            attempt = 0
            asked = self._request_for(index, request)
            while True:
                try:
                    return self._stamp(await provider.chat(asked), provider)
                except ProviderError as exc:
                    errors.append((provider, exc))
                    delay = self._delay(attempt, exc)
                    if delay is None:
                        break
                    attempt += 1
                    await self._sleep(delay)
            if not self._can_fall_back(errors[-1][1]):
                break
        raise self._give_up(errors) from errors[-1][1]

    def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        """Stream from the first provider that can; see the module docstring for replay rules.

        Raises:
            ProviderStreamInterrupted: a stream broke after text or a tool call was yielded.
            ProviderError: no provider could start an answer.
        """
        return self._stream(request)

    async def _stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        errors: list[tuple[Provider, ProviderError]] = []
        for index, provider in enumerate(self.providers):
            attempt = 0
            asked = self._request_for(index, request)
            while True:
                shown = False
                try:
                    async with aclosing(provider.stream(asked)) as events:  # type: ignore[type-var]
                        async for event in events:
                            if isinstance(event, StreamDone):
                                event = StreamDone(self._stamp(event.response, provider))
                            elif isinstance(event, (TextDelta, ToolCallReady)):
                                shown = True
                            yield event
                    return
                except ProviderStreamInterrupted:
                    raise
                except ProviderError as exc:
                    if shown:
                        raise ProviderStreamInterrupted(
                            f"the answer from {provider.name} (model '{provider.model}') broke "
                            f"off after text was shown: {exc}. The answer is incomplete; "
                            "ask again",
                            provider=provider.name,
                            model=provider.model,
                            status=exc.status,
                        ) from exc
                    errors.append((provider, exc))
                    delay = self._delay(attempt, exc)
                    if delay is None:
                        break
                    attempt += 1
                    await self._sleep(delay)
            if not self._can_fall_back(errors[-1][1]):
                break
        raise self._give_up(errors) from errors[-1][1]

    async def aclose(self) -> None:
        """Close every provider in the chain. Idempotent."""
        for provider in self.providers:
            await provider.aclose()

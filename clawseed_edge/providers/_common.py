"""Pieces every provider shares: HTTP status and transport errors -> the api error tree.

The translation is by duck-typing on the exception class names of httpx (used by the Ollama
and OpenAI-compatible providers) and httpx2 (used by the anthropic SDK), which share one
exception hierarchy; that keeps this module free of either import.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import time
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from contextlib import aclosing
from types import ModuleType
from typing import Any

from clawseed_edge.api.errors import (
    ConfigInvalid,
    ProviderAuthFailed,
    ProviderBadResponse,
    ProviderContextTooLong,
    ProviderError,
    ProviderModelNotFound,
    ProviderRateLimited,
    ProviderServerError,
    ProviderStreamInterrupted,
    ProviderTimeout,
    ProviderUnreachable,
)
from clawseed_edge.api.events import StreamEvent, TextDelta, ToolCallReady

HINT_PREFIX = "hint:"

_CONTEXT_MARKERS = (
    "context length",
    "context_length",
    "context window",
    "too many tokens",
    "prompt is too long",
    "maximum context",
    "too long",
)


def import_sdk(module: str, *, extra: str, provider: str) -> ModuleType:
    """Import a provider's SDK, or fail in one line naming the extra that installs it.

    Raises:
        ConfigInvalid: the SDK (or a module it needs) is not installed; the message gives the
            ``pip install 'clawseed-edge[<extra>]'`` command.
    """
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        missing = exc.name or module
        raise ConfigInvalid(
            f"provider {provider!r} needs the {module!r} SDK, but {missing!r} is not "
            f"installed: run pip install 'clawseed-edge[{extra}]'",
            key="provider.name",
        ) from None


def require_sdk(module: str, *, extra: str, provider: str) -> None:
    """Check that a provider's SDK is installed, without importing it (that waits for the
    first request: an idle service does not pay for an SDK it has not used yet).

    Raises:
        ConfigInvalid: the SDK is not installed (the same message as :func:`import_sdk`).
    """
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise ConfigInvalid(
            f"provider {provider!r} needs the {module!r} SDK, but {module!r} is not "
            f"installed: run pip install 'clawseed-edge[{extra}]'",
            key="provider.name",
        )


def native_tools_for(mode: str, detected: bool) -> bool:
    """Whether to use native tool calls under ``[provider] tool_mode``.

    ``native`` and ``prompt`` are the user's word; ``auto`` takes what the provider detected.
    """
    if mode == "native":
        return True
    if mode == "prompt":
        return False
    return detected


def refuses_tools(status: int, detail: str) -> bool:
    """Whether an HTTP error says the server cannot take native tools for this model.

    llama.cpp without ``--jinja`` ("tools param requires --jinja flag"), vLLM without
    ``--enable-auto-tool-choice``, Ollama ("does not support tools").
    """
    text = detail.lower()
    return status in (400, 422, 500) and (
        "does not support tools" in text
        or "requires --jinja" in text
        or "enable-auto-tool-choice" in text
        or ("tool" in text and "not supported" in text)
    )


def request_model(requested: str | None, configured: str) -> str:
    """The model to ask: the request's unless it is empty or a router hint (``hint:fast``)."""
    if requested and not requested.startswith(HINT_PREFIX):
        return requested
    return configured


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (seconds or an HTTP date), or None."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    import email.utils  # only for a Retry-After given as a date: rare, so not at start-up

    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def error_message_from_body(body: str) -> str:
    """The human message inside a JSON error body (``{"error": {"message": ...}}`` and kin)."""
    text = body.strip()
    try:
        data = json.loads(text)
    except ValueError:
        return text[:300]
    if isinstance(data, Mapping):
        err = data.get("error", data)
        if isinstance(err, Mapping):
            msg = err.get("message") or err.get("type")
            if msg:
                return str(msg)
        elif isinstance(err, str):
            return err
        if isinstance(data.get("message"), str):
            return str(data["message"])
    return text[:300]


def error_for_status(
    status: int,
    body: str,
    *,
    provider: str,
    model: str,
    base_url: str,
    key_env: str | None = None,
    retry_after: str | None = None,
) -> ProviderError:
    """The api error for an HTTP error answer (status >= 400)."""
    detail = error_message_from_body(body)
    kw: dict[str, Any] = {"provider": provider, "model": model, "status": status}
    where = f"{provider} at {base_url}"
    if status in (401, 403):
        key_hint = f"check the key in {key_env}" if key_env else "check the API key"
        return ProviderAuthFailed(
            f"API key rejected by {where} (HTTP {status}: {detail}): {key_hint}", **kw
        )
    if status == 404:
        return ProviderModelNotFound(
            f"model '{model}' not found at {where} (HTTP 404: {detail}): check provider.model",
            **kw,
        )
    if status == 429:
        wait = parse_retry_after(retry_after)
        advice = f"retry after {wait:g} s" if wait is not None else "wait and retry"
        return ProviderRateLimited(
            f"{where} is rate limiting requests (HTTP 429: {detail}): {advice}",
            retry_after=wait,
            **kw,
        )
    if status in (400, 413, 422) and any(m in detail.lower() for m in _CONTEXT_MARKERS):
        return ProviderContextTooLong(
            f"the prompt does not fit model '{model}' at {where} ({detail}): shorten the "
            "conversation or start a new session",
            **kw,
        )
    if status >= 500 or status == 408:
        return ProviderServerError(f"{where} failed (HTTP {status}: {detail}): try again", **kw)
    return ProviderError(f"{where} refused the request (HTTP {status}: {detail})", **kw)


def _class_names(exc: BaseException) -> set[str]:
    return {cls.__name__ for cls in type(exc).__mro__}


def is_http_library_error(exc: BaseException) -> bool:
    """Whether ``exc`` is an httpx/httpx2 transport or decoding error."""
    return bool(_class_names(exc) & {"HTTPError", "StreamError", "InvalidURL"})


def error_for_exception(
    exc: BaseException,
    *,
    provider: str,
    model: str,
    base_url: str,
    timeout_s: float,
    unreachable_hint: str = "check provider.base_url and that the server is running",
) -> ProviderError:
    """The api error for a transport failure, a decoding failure or garbage on the wire."""
    names = _class_names(exc)
    kw: dict[str, Any] = {"provider": provider, "model": model}
    if isinstance(exc, ProviderError):
        return exc
    if "TimeoutException" in names or isinstance(exc, TimeoutError):
        return ProviderTimeout(
            f"{provider} at {base_url} did not answer within timeout_s={timeout_s:g} s "
            f"(model '{model}'): raise provider.timeout_s or check the server",
            **kw,
        )
    if "ConnectError" in names or "ConnectTimeout" in names or isinstance(exc, ConnectionError):
        # A hosted API (no base_url given) is not "a model server" the user runs.
        where = (
            f"no model server at {base_url}" if "://" in base_url else f"cannot reach {base_url}"
        )
        return ProviderUnreachable(f"{where}: {unreachable_hint}", **kw)
    if names & {"RemoteProtocolError", "ReadError", "DecodingError", "ProtocolError"}:
        return ProviderBadResponse(
            f"{provider} at {base_url} broke the connection or sent bytes that are not HTTP "
            f"({exc}): check that provider.base_url is a server that speaks the {provider} "
            "protocol",
            **kw,
        )
    # RecursionError: JSON nested thousands deep (the SDK's decoder gave up), not a bug here
    bad = (ValueError, KeyError, IndexError, TypeError, AttributeError, RecursionError)
    if isinstance(exc, bad):
        return ProviderBadResponse(
            f"{provider} at {base_url} sent a response that is not its protocol ({exc}): "
            f"check that provider.base_url is a server that speaks the {provider} protocol",
            **kw,
        )
    return ProviderUnreachable(f"request to {provider} at {base_url} failed: {exc}", **kw)


async def guard_stream(
    events: AsyncGenerator[StreamEvent, None], *, provider: str, model: str
) -> AsyncIterator[StreamEvent]:
    """Pass events through; an error after text or a tool call was yielded is an interruption.

    Raises:
        ProviderStreamInterrupted: the stream broke after visible output; never replayed.
        ProviderError: the stream broke before any visible output (may be retried).
    """
    shown = False
    try:
        async with aclosing(events):
            async for event in events:
                if isinstance(event, (TextDelta, ToolCallReady)):
                    shown = True
                yield event
    except ProviderStreamInterrupted:
        raise
    except ProviderError as exc:
        if not shown:
            raise
        raise ProviderStreamInterrupted(
            f"the answer from {provider} (model '{model}') broke off after text was shown: "
            f"{exc}. The answer is incomplete; ask again",
            provider=provider,
            model=model,
            status=exc.status,
        ) from exc

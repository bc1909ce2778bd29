"""Bounds on one HTTP answer from a model server: its size and its total time.

``timeout_s`` bounds each read, so a server that sends one byte a second keeps a request alive
for ever, and nothing bounded the body: a 50 MB answer was read whole into memory. Every
built-in provider therefore talks through :func:`bounded_transport`, an httpx transport (our
Ollama and OpenAI-compatible clients use httpx; the anthropic 2.x SDK uses its fork,
httpx2, with the same transport interface) that wraps the real one:

* the whole request, from sending it to the last byte of the answer, must finish within
  ``deadline_s``, else :class:`ProviderTimeout` names ``provider.deadline_s``;
* the answer's body is counted as it streams in (a declared ``Content-Length`` is checked
  first); past ``max_response_bytes`` the connection is closed and
  :class:`ProviderBadResponse` names the size and ``provider.max_response_bytes``.

The count is of bytes on the wire: a compressed body is counted compressed (model servers
send JSON lines or SSE uncompressed, so the two agree there).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from clawseed_edge.api.errors import ProviderBadResponse, ProviderTimeout

__all__ = ["ResponseLimits", "bounded_transport"]


@dataclass(frozen=True, slots=True)
class ResponseLimits:
    """What one provider allows per request, and how to name it in errors.

    Attributes:
        max_bytes: Most bytes of one response body.
        deadline_s: Most seconds from sending a request to the end of its answer.
        provider: Provider name for messages.
        model: Configured model for messages.
        base_url: Server address for messages.
    """

    max_bytes: int
    deadline_s: float
    provider: str
    model: str
    base_url: str

    def too_large(self, size: int, *, declared: bool = False) -> ProviderBadResponse:
        """The error for a body of (at least) ``size`` bytes."""
        what = f"declared {size} bytes" if declared else f"sent more than {size} bytes"
        return ProviderBadResponse(
            f"{self.provider} at {self.base_url} {what} in one response (model "
            f"'{self.model}'); the limit is provider.max_response_bytes={self.max_bytes}: "
            "raise it if the answers are expected to be this long, or check the server",
            provider=self.provider,
            model=self.model,
        )

    def timed_out(self) -> ProviderTimeout:
        """The error for a request that ran past the deadline."""
        return ProviderTimeout(
            f"{self.provider} at {self.base_url} did not finish answering within "
            f"deadline_s={self.deadline_s:g} s (model '{self.model}'; it may be sending very "
            "slowly): raise provider.deadline_s or check the server",
            provider=self.provider,
            model=self.model,
        )


def bounded_transport(lib: ModuleType, inner: Any, limits: ResponseLimits) -> Any:
    """``inner`` (a ``lib.AsyncBaseTransport``) bounded by ``limits``.

    Args:
        lib: The httpx-like module the client comes from (``httpx`` or ``httpx2``); the
            wrapper subclasses its transport and stream base classes.
        inner: The transport that does the I/O (``lib.AsyncHTTPTransport()``, or a test's).
        limits: The bounds and the names for errors.
    """
    return _classes(lib)[0](inner, limits)


@functools.cache
def _classes(lib: ModuleType) -> tuple[type[Any], type[Any]]:
    """The transport and stream wrappers for ``lib`` (built once per library)."""

    class BoundedStream(lib.AsyncByteStream):  # type: ignore[name-defined,misc]
        """A response body that stops at the byte limit or the deadline."""

        def __init__(self, inner: Any, limits: ResponseLimits, deadline: float) -> None:
            self._inner = inner
            self._limits = limits
            self._deadline = deadline

        async def __aiter__(self) -> AsyncIterator[bytes]:
            received = 0
            chunks = self._inner.__aiter__()
            while True:
                try:
                    async with asyncio.timeout_at(self._deadline) as scope:
                        chunk = await chunks.__anext__()
                except StopAsyncIteration:
                    return
                except TimeoutError:
                    if scope.expired():
                        raise self._limits.timed_out() from None
                    raise
                received += len(chunk)
                if received > self._limits.max_bytes:
                    # stop reading here: the rest is never buffered
                    raise self._limits.too_large(self._limits.max_bytes)
                yield chunk

        async def aclose(self) -> None:
            await self._inner.aclose()

    class BoundedTransport(lib.AsyncBaseTransport):  # type: ignore[name-defined,misc]
        """Sends through ``inner``; bounds each answer (see the module doc)."""

        def __init__(self, inner: Any, limits: ResponseLimits) -> None:
            self._inner = inner
            self._limits = limits

        async def handle_async_request(self, request: Any) -> Any:
            deadline = asyncio.get_running_loop().time() + self._limits.deadline_s
            try:
                async with asyncio.timeout_at(deadline) as scope:
                    response = await self._inner.handle_async_request(request)
            except TimeoutError:
                if scope.expired():
                    raise self._limits.timed_out() from None
                raise
            declared = response.headers.get("content-length")
            if declared and declared.isdigit() and int(declared) > self._limits.max_bytes:
                await response.aclose()
                raise self._limits.too_large(int(declared), declared=True)
            response.stream = BoundedStream(response.stream, self._limits, deadline)
            return response

        async def aclose(self) -> None:
            await self._inner.aclose()

    return BoundedTransport, BoundedStream

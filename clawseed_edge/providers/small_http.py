"""One small JSON request over the standard library's ``http.client``, for capability probes.

A probe runs in the background of an idle service. Through httpx (or a provider's SDK) it
would load that library (httpx alone is about 15 MB of RSS measured here) into a process that
may never take a turn; ``http.client`` costs about 1 MB. Chat, streaming and embeddings still
go through httpx or the SDK, which load at the first request.

The request runs on its own daemon thread with a socket timeout, and the answer is read up
to ``max_bytes``: both bounded. A daemon thread, not the loop's default executor: a shutdown
must not wait for a probe of an unreachable server (the executor is joined at exit).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

__all__ = ["SmallResponse", "request_json"]

#: A probe's answer is a few KB; more is not an answer to a probe.
DEFAULT_MAX_BYTES = 1 << 20


@dataclass(frozen=True, slots=True)
class SmallResponse:
    """An HTTP answer: status and body text (at most ``max_bytes`` of it)."""

    status: int
    text: str

    def json(self) -> Any:
        """The body as JSON. Raises ValueError when it is not JSON."""
        return json.loads(self.text)


def _create_connection(
    address: tuple[str, int], timeout: float | None, source_address: tuple[str, int] | None
) -> socket.socket:
    """``socket.create_connection`` with an ASCII host name passed as bytes: ``getaddrinfo``
    encodes a ``str`` host with the IDNA codec, whose import (unicodedata, stringprep) costs an
    idle service 0.4 MB for a probe of ``127.0.0.1``. A non-ASCII name still goes through it."""
    host, port = address
    name: str | bytes = host.encode("ascii") if host.isascii() else host
    return socket.create_connection((name, port), timeout, source_address)  # type: ignore[arg-type]


def _request(
    url: str,
    method: str,
    body: bytes | None,
    headers: dict[str, str],
    timeout_s: float,
    max_bytes: int,
) -> SmallResponse:
    import http.client  # on use: an idle process that never probes does not need it

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not an http(s) URL: {url!r}")
    connection_class = (
        http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    )
    connection = connection_class(parts.hostname, parts.port, timeout=timeout_s)
    # http.client's own hook for how the socket is made (an instance attribute since 3.x).
    connection._create_connection = _create_connection  # type: ignore[attr-defined]
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    try:
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        data = response.read(max_bytes + 1)
        if len(data) > max_bytes:
            raise ValueError(f"the answer from {url} is larger than {max_bytes} bytes")
        return SmallResponse(response.status, data.decode("utf-8", "replace"))
    finally:
        connection.close()


async def request_json(
    url: str,
    *,
    method: str = "GET",
    payload: Any = None,
    headers: dict[str, str] | None = None,
    timeout_s: float = 10.0,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> SmallResponse:
    """Send one request (``payload`` as a JSON body) and return the answer.

    Raises:
        OSError: the server cannot be reached (ConnectionRefusedError ...), TimeoutError
            after ``timeout_s`` without progress.
        http.client.HTTPException: the answer is not HTTP.
        ValueError: a bad URL, or an answer larger than ``max_bytes``.

    Cancelling stops the wait; the worker thread ends within ``timeout_s``.
    """
    body = None if payload is None else json.dumps(payload).encode()
    all_headers = {"Accept": "application/json", **(headers or {})}
    if body is not None:
        all_headers["Content-Type"] = "application/json"
    loop = asyncio.get_running_loop()
    done: asyncio.Future[SmallResponse] = loop.create_future()

    def settle(result: SmallResponse | None, error: BaseException | None) -> None:
        if done.done():  # the caller was cancelled: nobody waits for this answer
            return
        if error is not None:
            done.set_exception(error)
        else:
            done.set_result(result)  # type: ignore[arg-type]

    def work() -> None:
        outcome: tuple[SmallResponse | None, BaseException | None]
        try:
            outcome = (_request(url, method, body, all_headers, timeout_s, max_bytes), None)
        except Exception as exc:
            outcome = (None, exc)
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody waits
            loop.call_soon_threadsafe(settle, *outcome)

    threading.Thread(target=work, name="small-http", daemon=True).start()
    return await done

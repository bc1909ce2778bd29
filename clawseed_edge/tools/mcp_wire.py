"""The Model Context Protocol's wire, shared by our MCP server and client: JSON-RPC 2.0
framing, the protocol revisions we speak, and bounded readers for newline-delimited JSON and
server-sent events.

Nothing here does I/O of its own: a :class:`LineReader` or :class:`SseReader` takes the bytes a
transport read and gives whole messages, never holding more than its cap (a line over the cap
is skipped to its end and reported once, as :class:`WireTooLarge`). Decoding is msgspec's;
no pydantic, no SDK (docs/mcp.md says why).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import msgspec

from clawseed_edge.api import ClawseedError

__all__ = [
    "HANDSHAKE_VERSIONS",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "LATEST_HANDSHAKE",
    "LATEST_MODERN",
    "METHOD_NOT_FOUND",
    "MODERN_VERSIONS",
    "PARSE_ERROR",
    "UNSUPPORTED_VERSION",
    "LineReader",
    "RpcError",
    "SseReader",
    "WireTooLarge",
    "decode",
    "encode",
    "error",
    "request_version",
    "result",
]

# JSON-RPC 2.0's error codes, and MCP's for an unsupported protocol revision.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
UNSUPPORTED_VERSION = -32022

#: Revisions negotiated by ``initialize`` (oldest first) and those that carry their version in
#: every request's ``_meta`` (``server/discover``). New ones are added here, one line each.
HANDSHAKE_VERSIONS = ("2025-06-18", "2025-11-25")
MODERN_VERSIONS = ("2026-07-28",)
LATEST_HANDSHAKE = HANDSHAKE_VERSIONS[-1]
LATEST_MODERN = MODERN_VERSIONS[-1]
#: Where a 2026-era request names its revision, client and capabilities.
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT = "io.modelcontextprotocol/clientInfo"
META_SERVER = "io.modelcontextprotocol/serverInfo"

_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder()


class RpcError(ClawseedError, ValueError):
    """A JSON-RPC error to answer with (``rpc_code``), or one a peer answered with."""

    code = "mcp_rpc_error"

    def __init__(self, rpc_code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.rpc_code = rpc_code
        self.data = data


class WireTooLarge(ClawseedError, ValueError):
    """A message was over the size cap; it was skipped without being held."""

    code = "mcp_message_too_large"


def encode(message: Any) -> bytes:
    """One message as compact JSON bytes (no newline)."""
    return _encoder.encode(message)


def decode(data: bytes | str) -> Any:
    """A JSON value from ``data``.

    Raises:
        RpcError: ``PARSE_ERROR`` when it is not JSON (the message says where).
    """
    try:
        return _decoder.decode(data)
    except msgspec.DecodeError as exc:
        raise RpcError(PARSE_ERROR, f"not JSON: {str(exc)[:200]}") from None


def result(request_id: Any, value: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": value}


def error(request_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {"code": code, "message": message[:2000]}
    if data is not None:
        body["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": body}


def request_version(params: Any) -> str | None:
    """The revision a 2026-era request names in its ``_meta`` (None: a handshake-era one)."""
    if not isinstance(params, dict):
        return None
    meta = params.get("_meta")
    if not isinstance(meta, dict):
        return None
    version = meta.get(META_VERSION)
    return str(version)[:40] if version is not None else None


class LineReader:
    """Newline-delimited messages from chunks of bytes, each at most ``max_bytes``.

    ``feed(chunk)`` yields every complete line; a line over the cap is dropped as it arrives
    (nothing past the cap is kept) and :class:`WireTooLarge` is yielded once in its place.
    """

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._buffer = bytearray()
        self._skipping = False

    def feed(self, chunk: bytes) -> Iterator[bytes | WireTooLarge]:
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            if end < 0:
                yield from self._keep(chunk[start:])
                return
            if self._skipping:
                self._skipping = False  # the long line ends here; what follows is new
            else:
                piece = chunk[start:end]
                if len(self._buffer) + len(piece) > self.max_bytes:
                    self._buffer.clear()
                    yield self._too_large()
                else:
                    self._buffer += piece
                    line = bytes(self._buffer).strip()
                    self._buffer.clear()
                    if line:
                        yield line
            start = end + 1

    def _keep(self, rest: bytes) -> Iterator[WireTooLarge]:
        if self._skipping:
            return
        if len(self._buffer) + len(rest) > self.max_bytes:
            self._buffer.clear()
            self._skipping = True  # drop the rest of this line as it arrives
            yield self._too_large()
            return
        self._buffer += rest

    def _too_large(self) -> WireTooLarge:
        return WireTooLarge(
            f"a message over {self.max_bytes} bytes was skipped (the limit of this connection)"
        )


class SseReader:
    """``data:`` payloads of a ``text/event-stream`` from chunks, each at most ``max_bytes``.

    Yields one payload (bytes) per ``data:`` line (our peers send one per event); a line over
    the cap yields :class:`WireTooLarge` at once (nothing past the cap is kept).
    """

    def __init__(self, max_bytes: int) -> None:
        self.lines = LineReader(max_bytes + 8)

    def feed(self, chunk: bytes) -> Iterator[bytes | WireTooLarge]:
        for line in self.lines.feed(chunk):
            if isinstance(line, WireTooLarge):
                yield line
            elif line.startswith(b"data:"):
                data = line[5:].strip()
                if data:
                    yield data
            # "event:", "id:", "retry:" and ":" comments carry nothing we use

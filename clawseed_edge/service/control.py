"""The local control socket: ``$CLAWSEED_HOME/control.sock``, mode 0600, JSON lines.

One request per line, ``{"op": "pair", ...}``; one answer per line, ``{"ok": true, ...}`` or
``{"ok": false, "error": {"code", "message"}}``. Only the user who runs the service (and root)
can connect: the file mode is the access control, so no tokens are needed here.

A streaming op (``mcp_call`` asking back for an approval, ``mcp_watch`` sending state changes)
exchanges frames on the same connection before its answer: lines without an ``ok`` key, each
way (:class:`ControlStream`; the client opens one with :func:`control_stream`). The answer, the
line with ``ok``, ends the op.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from clawseed_edge.api import ClawseedError, Lifecycle

__all__ = [
    "ControlError",
    "ControlServer",
    "ControlStream",
    "control_path",
    "control_request",
    "control_stream",
    "find_control_socket",
    "stream_answer",
]

log = logging.getLogger(__name__)

MAX_LINE = 65536
#: How long :meth:`ControlServer.aclose` waits for the connections to end.
CLOSE_TIMEOUT_S = 2.0
Handler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]


class ControlStream:
    """A streaming op's frames on one connection, either side: JSON objects, one per line.

    A frame carries no ``ok`` key; the op's answer (with ``ok``) ends the exchange. Lines are
    bounded by :data:`MAX_LINE`.
    """

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer

    async def send(self, frame: dict[str, Any]) -> None:
        """Send one frame. Raises ControlError when the other side is gone. Cancel-safe."""
        try:
            self._writer.write(json.dumps(frame).encode() + b"\n")
            await self._writer.drain()
        except (ConnectionError, RuntimeError) as exc:
            raise ControlError(f"the control connection closed ({exc})") from exc

    async def receive(self) -> dict[str, Any]:
        """The next frame (or answer).

        Raises:
            ControlError: The other side closed the connection or sent something unreadable.

        Cancel-safe (a cancelled read loses nothing the op still needs: it ends).
        """
        try:
            line = await self._reader.readline()
        except (ConnectionError, ValueError) as exc:  # ValueError: a line over MAX_LINE
            raise ControlError(f"the control connection failed ({exc})") from exc
        if not line:
            raise ControlError("the other side closed the control connection")
        try:
            frame = json.loads(line)
        except ValueError:
            frame = None
        if not isinstance(frame, dict):
            raise ControlError("an unreadable frame on the control connection (not a JSON object)")
        return frame


#: A streaming op's handler: the request and its connection's frames -> the answer.
StreamHandler = Callable[[dict[str, Any], ControlStream], Awaitable[dict[str, Any]]]


class ControlError(ClawseedError, ConnectionError):
    """The running service could not be reached, or it refused the request.

    Attributes:
        refusal: The service's own error code when it refused (``"estop_latched"``), else
            None (not reached, or an unreadable answer).
    """

    code = "control_error"

    def __init__(self, message: str, refusal: str | None = None) -> None:
        super().__init__(message)
        self.refusal = refusal


def control_path(home: Path) -> Path:
    return home / "control.sock"


#: Where the system service (``StateDirectory=clawseed-edge``) keeps its socket.
SYSTEM_SOCKET = Path("/var/lib/clawseed-edge/control.sock")


def find_control_socket(home: Path) -> Path:
    """The socket of the running service: ``$CLAWSEED_HOME``'s, else the system service's.

    So ``sudo clawseed-edge estop`` reaches the service systemd runs without being told its
    home. Returns the ``$CLAWSEED_HOME`` path when neither exists (the error then names it).
    """
    own = control_path(home)
    if own.exists():
        return own
    try:
        if SYSTEM_SOCKET.exists():
            return SYSTEM_SOCKET
    except OSError:  # /var/lib/clawseed-edge is 0700: not ours to look into
        pass
    return own


class ControlServer:
    """Serves ``handlers`` by op name on a Unix socket at ``path``.

    ``streams`` are the streaming ops (see the module docstring), by op name.

    Raises (from :meth:`start`):
        ControlError: Another service already answers on ``path``.
    """

    def __init__(
        self,
        path: Path,
        handlers: Mapping[str, Handler],
        streams: Mapping[str, StreamHandler] | None = None,
    ) -> None:
        self.path = path
        self.handlers = dict(handlers)
        self.streams = dict(streams or {})
        #: Open connections: closed by :meth:`aclose` (a streaming op may hold one for long,
        #: and Python 3.12's ``wait_closed`` waits for every connection).
        self._writers: set[asyncio.StreamWriter] = set()
        self.state = Lifecycle.UNOPENED
        self._server: asyncio.Server | None = None

    async def start(self) -> None:
        """Listen (replacing a stale socket file left by a crashed service).

        Safe to cancel.
        """
        if self.path.exists():
            try:
                await control_request(self.path, "ping", timeout_s=1.0)
            except ControlError:
                self.path.unlink(missing_ok=True)  # nobody answers: a leftover
            else:
                raise ControlError(
                    f"another clawseed-edge service is running (it answers on {self.path}); "
                    "stop it first (systemctl stop clawseed-edge)"
                )
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # Create the socket owner-only from the start: chmod after bind would leave a window.
        old = os.umask(0o177)
        try:
            self._server = await asyncio.start_unix_server(
                self._serve_client, path=str(self.path), limit=MAX_LINE
            )
        finally:
            os.umask(old)
        os.chmod(self.path, 0o600)
        self.state = Lifecycle.OPEN

    async def _serve_client(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        stream = ControlStream(reader, writer)
        self._writers.add(writer)
        try:
            while line := await reader.readline():
                writer.write(json.dumps(await self._answer(line, stream)).encode() + b"\n")
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            pass  # a client that went away or sent an overlong line
        finally:
            self._writers.discard(writer)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _answer(self, line: bytes, stream: ControlStream) -> dict[str, Any]:
        try:
            request = json.loads(line)
            if not isinstance(request, dict):
                raise ValueError("not an object")
        except ValueError:
            return _error("request_invalid", 'send one JSON object per line: {"op": "status"}')
        op = request.get("op")
        if op == "ping":
            return {"ok": True}
        handler = self.handlers.get(op) if isinstance(op, str) else None
        streaming = self.streams.get(op) if isinstance(op, str) else None
        if handler is None and streaming is None:
            known = ", ".join(sorted(["ping", *self.handlers, *self.streams]))
            return _error("op_unknown", f"unknown op {str(op)[:40]!r}; known: {known}")
        try:
            if streaming is not None:
                return {"ok": True, **await streaming(request, stream)}
            assert handler is not None
            return {"ok": True, **await handler(request)}
        except ClawseedError as exc:
            return _error(exc.code, str(exc))
        except Exception as exc:
            log.exception("control op %s failed", op)
            return _error("internal_error", f"{op} failed: {type(exc).__name__}: {exc}")

    async def aclose(self) -> None:
        """Stop listening and remove the socket file. Idempotent.

        Safe to cancel.
        """
        if self.state is Lifecycle.CLOSED:
            return
        self.state = Lifecycle.CLOSED
        if self._server is not None:
            self._server.close()
            for writer in list(self._writers):  # the watchers and calls still connected
                writer.close()
            with contextlib.suppress(Exception):
                async with asyncio.timeout(CLOSE_TIMEOUT_S):
                    await self._server.wait_closed()
        self.path.unlink(missing_ok=True)


def _error(code: str, message: str) -> dict[str, Any]:
    return {"ok": False, "error": {"code": code, "message": message}}


async def control_request(
    path: Path, op: str, *, timeout_s: float = 10.0, **arguments: Any
) -> dict[str, Any]:
    """Send one request to the running service and return its answer.

    Raises:
        ControlError: No service answers on ``path``, or it answered with an error.

    Cancel-safe: the connection is closed.
    """
    try:
        async with asyncio.timeout(timeout_s):
            reader, writer = await asyncio.open_unix_connection(str(path), limit=MAX_LINE)
            try:
                writer.write(json.dumps({"op": op, **arguments}).encode() + b"\n")
                await writer.drain()
                line = await reader.readline()
            finally:
                writer.close()
                with contextlib.suppress(Exception):
                    await writer.wait_closed()
    except (OSError, TimeoutError) as exc:
        raise _unreachable(path, exc) from exc
    try:
        answer = json.loads(line)
    except ValueError as exc:
        raise ControlError(f"the service sent an unreadable answer on {path}") from exc
    if not answer.get("ok"):
        error = answer.get("error") or {}
        refusal = error.get("code")
        raise ControlError(
            str(error.get("message", "the service refused the request")),
            str(refusal)[:64] if refusal else None,
        )
    return dict(answer)


@contextlib.asynccontextmanager
async def control_stream(
    path: Path, op: str, *, timeout_s: float = 10.0, **arguments: Any
) -> AsyncIterator[ControlStream]:
    """Open a streaming op on the running service: its frames, then its answer (``ok``).

    ``timeout_s`` bounds the connection and the request only; the caller bounds the exchange.
    Use :func:`stream_answer` on the line with ``ok``.

    Raises:
        ControlError: No service answers on ``path``.

    Cancel-safe: the connection is closed.
    """
    try:
        async with asyncio.timeout(timeout_s):
            reader, writer = await asyncio.open_unix_connection(str(path), limit=MAX_LINE)
            writer.write(json.dumps({"op": op, **arguments}).encode() + b"\n")
            await writer.drain()
    except (OSError, TimeoutError) as exc:
        raise _unreachable(path, exc) from exc
    try:
        yield ControlStream(reader, writer)
    finally:
        writer.close()
        with contextlib.suppress(Exception):
            await writer.wait_closed()


def stream_answer(answer: dict[str, Any]) -> dict[str, Any]:
    """A streaming op's answer (the line with ``ok``); raises ControlError when it is an error."""
    if not answer.get("ok"):
        error = answer.get("error") or {}
        raise ControlError(str(error.get("message", "the service refused the request")))
    return answer


def _unreachable(path: Path, exc: BaseException) -> ControlError:
    """The error for a control socket that nobody answers on."""
    return ControlError(
        f"no clawseed-edge service answers on {path} ({exc}); start it with "
        "`clawseed-edge gateway` or `clawseed-edge run`"
    )

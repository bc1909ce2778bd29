"""The local control socket: ``$CLAWSEED_HOME/control.sock``, mode 0600, JSON lines.

One request per line, ``{"op": "pair", ...}``; one answer per line, ``{"ok": true, ...}`` or
``{"ok": false, "error": {"code", "message"}}``. Only the user who runs the service (and root)
can connect: the file mode is the access control, so no tokens are needed here.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from clawseed_edge.api import ClawseedError, Lifecycle

__all__ = [
    "ControlError",
    "ControlServer",
    "control_path",
    "control_request",
    "find_control_socket",
]

log = logging.getLogger(__name__)

MAX_LINE = 65536
Handler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]


class ControlError(ClawseedError, ConnectionError):
    """The running service could not be reached, or it refused the request."""

    code = "control_error"


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

    Raises (from :meth:`start`):
        ControlError: Another service already answers on ``path``.
    """

    def __init__(self, path: Path, handlers: Mapping[str, Handler]) -> None:
        self.path = path
        self.handlers = dict(handlers)
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
        try:
            while line := await reader.readline():
                writer.write(json.dumps(await self._answer(line)).encode() + b"\n")
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            pass  # a client that went away or sent an overlong line
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _answer(self, line: bytes) -> dict[str, Any]:
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
        if handler is None:
            known = ", ".join(sorted(["ping", *self.handlers]))
            return _error("op_unknown", f"unknown op {str(op)[:40]!r}; known: {known}")
        try:
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
            with contextlib.suppress(Exception):
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
        raise ControlError(
            f"no clawseed-edge service answers on {path} ({exc}); start it with "
            "`clawseed-edge gateway` or `clawseed-edge run`"
        ) from exc
    try:
        answer = json.loads(line)
    except ValueError as exc:
        raise ControlError(f"the service sent an unreadable answer on {path}") from exc
    if not answer.get("ok"):
        error = answer.get("error") or {}
        raise ControlError(str(error.get("message", "the service refused the request")))
    return dict(answer)

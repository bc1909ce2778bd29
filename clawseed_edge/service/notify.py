"""systemd's readiness protocol (``sd_notify``) and its watchdog, without libsystemd.

Under ``Type=notify`` systemd passes ``NOTIFY_SOCKET`` (a path, or an abstract socket written
with a leading ``@``) and the service sends it datagrams of ``KEY=value`` lines: ``READY=1``
once it serves, ``STATUS=...`` for ``systemctl status``, ``STOPPING=1`` when it begins to stop,
``WATCHDOG=1`` as a keep-alive. With ``WatchdogSec=`` systemd also passes ``WATCHDOG_USEC``
(and ``WATCHDOG_PID``, the process it expects the pings from); a service that stops pinging
for that long is killed (SIGABRT) and, with ``Restart=on-failure``, started again.

The pings come from a task on the event loop itself: a loop blocked by a bug stops them, which
is the point. Outside systemd (no ``NOTIFY_SOCKET``) every call here does nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
from collections.abc import Mapping

__all__ = ["Notifier", "watchdog_interval_s"]

log = logging.getLogger(__name__)

#: A status line is for a human in ``systemctl status``: keep it short, one line.
MAX_STATUS_CHARS = 200


def watchdog_interval_s(environ: Mapping[str, str] | None = None) -> float | None:
    """The watchdog timeout systemd asks for, in seconds, or None when there is none.

    None too when ``WATCHDOG_PID`` names another process (the variable was inherited by a
    child, which must not ping on its parent's behalf), or the value is not a positive integer.
    """
    env = os.environ if environ is None else environ
    usec = env.get("WATCHDOG_USEC", "")
    if not usec.isdigit() or int(usec) == 0:
        return None
    pid = env.get("WATCHDOG_PID", "")
    if pid and (not pid.isdigit() or int(pid) != os.getpid()):
        return None
    return int(usec) / 1_000_000


class Notifier:
    """Sends ``sd_notify`` messages to ``NOTIFY_SOCKET`` (a no-op when it is unset).

    Args:
        environ: Where to read ``NOTIFY_SOCKET`` / ``WATCHDOG_USEC`` / ``WATCHDOG_PID``
            (default: the process environment).

    Sending never raises: systemd going away must not take the service down with it; a failed
    send is logged once.
    """

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        env = os.environ if environ is None else environ
        self.address = _address(env.get("NOTIFY_SOCKET", ""))
        self.watchdog_s = watchdog_interval_s(env)
        self._sock: socket.socket | None = None
        self._warned = False
        self._pinger: asyncio.Task[None] | None = None

    @property
    def enabled(self) -> bool:
        """Whether a notify socket was given (the process runs under ``Type=notify``)."""
        return self.address is not None

    def send(self, **fields: str | int) -> bool:
        """Send one message: ``send(READY=1, STATUS="serving")``; returns whether it went."""
        if self.address is None:
            return False
        lines = []
        for key, value in fields.items():
            text = " ".join(str(value).split())  # one line per field: no newline may slip in
            lines.append(f"{key}={text}")
        try:
            if self._sock is None:
                self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
            self._sock.sendto("\n".join(lines).encode(), self.address)
        except OSError as exc:
            if not self._warned:
                self._warned = True
                log.warning("cannot notify systemd on %r: %s", self.address, exc)
            return False
        return True

    def ready(self, status: str) -> bool:
        """``READY=1`` with a status line."""
        return self.send(READY=1, STATUS=status[:MAX_STATUS_CHARS])

    def status(self, status: str) -> bool:
        """A ``STATUS=`` line for ``systemctl status``."""
        return self.send(STATUS=status[:MAX_STATUS_CHARS])

    def stopping(self, status: str = "stopping: applying the safe state") -> bool:
        """``STOPPING=1``: the service begins its ordered stop."""
        return self.send(STOPPING=1, STATUS=status[:MAX_STATUS_CHARS])

    def reloading(self, status: str = "reloading the config") -> bool:
        """``RELOADING=1`` (``READY=1`` follows when the reload is done).

        systemd 253 and later want the monotonic clock with it, to order the two messages.
        """
        usec = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
        return self.send(RELOADING=1, MONOTONIC_USEC=usec, STATUS=status[:MAX_STATUS_CHARS])

    def start_watchdog(self) -> None:
        """Ping ``WATCHDOG=1`` at half the interval from a task on the running loop.

        Does nothing without ``NOTIFY_SOCKET`` or ``WATCHDOG_USEC`` (for this process).
        """
        if self.address is None or self.watchdog_s is None or self._pinger is not None:
            return
        self._pinger = asyncio.get_running_loop().create_task(
            self._ping_forever(self.watchdog_s / 2), name="sd-watchdog"
        )

    async def _ping_forever(self, every_s: float) -> None:
        while True:
            self.send(WATCHDOG=1)
            await asyncio.sleep(every_s)

    async def aclose(self) -> None:
        """Stop the pings and close the socket. Idempotent; safe to cancel."""
        pinger, self._pinger = self._pinger, None
        if pinger is not None:
            pinger.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await pinger
        if self._sock is not None:
            self._sock.close()
            self._sock = None


def _address(value: str) -> str | None:
    """The socket address of ``NOTIFY_SOCKET``: a path, or ``@name`` for an abstract socket."""
    if not value:
        return None
    if value.startswith("@"):
        return "\0" + value[1:]  # Linux abstract namespace
    if value.startswith("/"):
        return value
    log.warning("NOTIFY_SOCKET=%r is neither a path nor an abstract name; not notifying", value)
    return None

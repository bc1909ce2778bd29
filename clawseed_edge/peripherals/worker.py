"""``BlockingWorker``: one thread per blocking resource, fed by a FIFO queue.

Every bus that blocks (gpiozero on lgpio, an smbus2 I2C bus, a serial port) owns one worker:
calls run one at a time, in the order they were submitted, on the same thread (gpiozero and
smbus objects are not documented as safe to share between threads). Results come back to the
event loop with ``call_soon_threadsafe``, guarded by ``if not fut.done()`` so that a caller
who was cancelled meanwhile is harmless — the aiosqlite pattern.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from clawseed_edge.api import ResourceClosed

__all__ = ["BlockingWorker"]

log = logging.getLogger(__name__)
T = TypeVar("T")

_Job = tuple[Callable[..., Any], tuple[Any, ...], asyncio.Future[Any], asyncio.AbstractEventLoop]


def _settle(fut: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    # The caller may have been cancelled while the job ran: then nobody wants the result.
    if fut.done():
        return
    if error is not None:
        fut.set_exception(error)
    else:
        fut.set_result(result)


class BlockingWorker:
    """A thread that runs blocking calls for one resource, first in, first out.

    Args:
        name: The thread's name (``gpio-pi``), seen in ``py-spy`` and thread dumps.

    The thread starts on the first :meth:`run` and is a daemon: a hung syscall cannot keep the
    process from exiting (the exit hooks of the peripherals apply the safe values first).
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self._queue: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._closed = False

    @property
    def closed(self) -> bool:
        return self._closed

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(*args)`` on the worker thread and return its result (or raise its error).

        Safe to cancel: the call still runs (it may already have switched a pin), its result is
        dropped. Jobs queued before :meth:`aclose` still run.

        Raises:
            ResourceClosed: The worker was closed.
        """
        if self._closed:
            raise ResourceClosed(f"worker {self.name!r} is closed; make a new resource")
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[T] = loop.create_future()
        self._start()
        self._queue.put((fn, args, fut, loop))
        return await fut

    def _start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name=self.name, daemon=True)
            self._thread.start()

    def _loop(self) -> None:
        while True:
            job = self._queue.get()
            if job is None:
                return
            fn, args, fut, loop = job
            result: Any = None
            error: BaseException | None = None
            try:
                result = fn(*args)
            except BaseException as exc:  # handed to the caller, who decides
                error = exc
            # A closed loop cannot take the result; the job itself has run.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(_settle, fut, result, error)

    def close_nowait(self) -> None:
        """Stop accepting jobs; the thread exits after the jobs already queued. Idempotent."""
        if not self._closed:
            self._closed = True
            self._queue.put(None)

    async def aclose(self, timeout_s: float = 5.0) -> bool:
        """Stop accepting jobs and wait (at most ``timeout_s`` seconds) for the queued ones.

        Returns whether the thread finished in time; a thread stuck in a syscall is left behind
        (it is a daemon) and logged. Idempotent; safe to cancel (the thread still finishes).
        """
        if self._closed or self._thread is None:
            self.close_nowait()
            return True
        # FIFO: when this marker job has run, every job queued before it has run too.
        loop = asyncio.get_running_loop()
        marker: asyncio.Future[None] = loop.create_future()
        self._queue.put((_noop, (), marker, loop))
        self.close_nowait()
        try:
            async with asyncio.timeout(timeout_s):
                await asyncio.shield(marker)
        except TimeoutError:
            log.warning("worker %s did not finish within %g s; leaving it", self.name, timeout_s)
            return False
        return True


def _noop() -> None:
    return None

"""``BlockingWorker``: one thread per blocking resource, fed by a FIFO queue.

Every bus that blocks (gpiozero on lgpio, an smbus2 I2C bus, a serial port) owns one worker:
calls run one at a time, in the order they were submitted, on the same thread (gpiozero and
smbus objects are not documented as safe to share between threads). Results come back to the
event loop with ``call_soon_threadsafe``, guarded by ``if not fut.done()`` so that a caller
who was cancelled meanwhile is harmless — the aiosqlite pattern.

A worker can also make a call on its own clock (:meth:`BlockingWorker.repeat`): a sensor read
every second runs on the worker's timed wait and leaves its outcome in a slot, so neither the
event loop nor the thread is woken by a job being posted or a result coming back.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from clawseed_edge.api import ResourceClosed

__all__ = ["BlockingWorker", "Outcome", "Repeating"]

log = logging.getLogger(__name__)
T = TypeVar("T")

#: The least time (seconds) a repeated call starts before its outcome is due.
MIN_LEAD_S = 0.05

_Job = tuple[Callable[..., Any], tuple[Any, ...], asyncio.Future[Any], asyncio.AbstractEventLoop]


def _settle(fut: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    # The caller may have been cancelled while the job ran: then nobody wants the result.
    if fut.done():
        return
    if error is not None:
        fut.set_exception(error)
    else:
        fut.set_result(result)


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one repeated call gave: ``result`` or ``error``, ``taken`` (monotonic seconds)
    when it returned."""

    taken: float
    result: Any = None
    error: BaseException | None = None


class Repeating:
    """A call a :class:`BlockingWorker` makes on its own so that an outcome is ready by each
    slot of a grid (``ready_by``, then every ``every_s`` seconds; monotonic).

    Each call starts ``lead`` seconds before its slot, where ``lead`` follows how long the
    calls take (1.5 times the last one plus 10 ms, at least :data:`MIN_LEAD_S`, at most 80% of
    the interval). The latest outcome waits until :meth:`take` (a newer one replaces it);
    :meth:`cancel` stops it. Only the worker's thread runs ``fn``.
    """

    def __init__(self, fn: Callable[[], Any], ready_by: float, every_s: float) -> None:
        if every_s <= 0:
            raise ValueError(f"every_s must be positive, not {every_s!r}")
        self.fn = fn
        self.ready_by = ready_by
        self.every_s = every_s
        self.lead = MIN_LEAD_S
        self.cancelled = False
        self._outcome: Outcome | None = None
        self._lock = threading.Lock()  # never held across fn: uncontended, no context switch

    @property
    def due(self) -> float:
        """When the next call starts (monotonic seconds)."""
        return self.ready_by - self.lead

    def take(self) -> Outcome | None:
        """The outcome not taken yet (None: none since the last take)."""
        with self._lock:
            out, self._outcome = self._outcome, None
        return out

    def cancel(self) -> None:
        """Make no more calls (one running completes; its outcome is dropped)."""
        self.cancelled = True
        with self._lock:
            self._outcome = None

    def _run(self) -> None:
        started = time.monotonic()
        try:
            result, error = self.fn(), None
        except BaseException as exc:  # handed to whoever takes it
            result, error = None, exc
        taken = time.monotonic()
        self.lead = min(0.8 * self.every_s, max(MIN_LEAD_S, 1.5 * (taken - started) + 0.01))
        # The next slot whose call starts after now (a long call skips slots, never bunches).
        while self.due <= taken:
            self.ready_by += self.every_s
        if not self.cancelled:
            with self._lock:
                self._outcome = Outcome(taken, result, error)


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
        self._repeating: list[Repeating] = []

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

    def repeat(self, fn: Callable[[], Any], ready_in_s: float, every_s: float) -> Repeating:
        """Call ``fn()`` on the worker so that an outcome is ready in ``ready_in_s`` seconds,
        then every ``every_s`` seconds.

        The calls run between jobs, on the worker's own timed wait; each outcome waits in the
        returned :class:`Repeating` until taken. Cancel it to stop.

        Raises:
            ResourceClosed: The worker was closed.
        """
        if self._closed:
            raise ResourceClosed(f"worker {self.name!r} is closed; make a new resource")
        rep = Repeating(fn, time.monotonic() + max(0.0, ready_in_s), every_s)
        self._repeating = [r for r in self._repeating if not r.cancelled] + [rep]
        self._start()
        self._queue.put(_WAKE)  # the thread recomputes how long it may sleep
        return rep

    def _loop(self) -> None:
        while True:
            try:
                job = self._queue.get(timeout=self._sleep_s())
            except queue.Empty:
                self._run_due()
                continue
            if job is None:
                return
            if job is _WAKE:
                self._run_due()
                continue
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
            self._run_due()

    def _sleep_s(self) -> float | None:
        """How long the thread may wait for a job: until the next repeated call (None: ever)."""
        dues = [r.due for r in self._repeating if not r.cancelled]
        return max(0.0, min(dues) - time.monotonic()) if dues else None

    def _run_due(self) -> None:
        now = time.monotonic()
        for rep in list(self._repeating):
            if not rep.cancelled and rep.due <= now:
                rep._run()

    def close_nowait(self) -> None:
        """Stop accepting jobs; the thread exits after the jobs already queued. Idempotent."""
        if not self._closed:
            self._closed = True
            for rep in self._repeating:
                rep.cancel()
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


#: A job that only wakes the thread (a new repeated call changes how long it may sleep).
_WAKE: Any = object()

"""``BlockingWorker``: one thread for one blocking resource, fed in FIFO order.

The sysfs sensors use it: reading ``w1_slave`` blocks for a 750 ms conversion, a DHT read for
the kernel's 2 s of retries, and neither may run on the event loop. Results come back through
the loop's future; a caller that is cancelled leaves the work to finish on the thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from clawseed_edge.api import Lifecycle, ResourceClosed

__all__ = ["BlockingWorker"]

T = TypeVar("T")


class BlockingWorker:
    """A single worker thread named ``name``; started on first use, stopped by :meth:`aclose`."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.state = Lifecycle.UNOPENED
        self._executor: ThreadPoolExecutor | None = None

    async def run(self, fn: Callable[..., T], *args: object) -> T:
        """``fn(*args)`` on the worker thread, after everything submitted before it.

        Raises:
            ResourceClosed: The worker was closed.

        Safe to cancel: the call still completes on the thread.
        """
        if self.state is Lifecycle.CLOSED:
            raise ResourceClosed(f"worker {self.name!r} was closed")
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=self.name)
            self.state = Lifecycle.OPEN
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)

    async def aclose(self) -> None:
        """Stop accepting work; the thread ends after the work already queued. Idempotent."""
        self.state = Lifecycle.CLOSED
        executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=False)

"""Run a service until it is asked to stop, a stop asked while it starts included."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .process import Service

__all__ = ["serve"]


async def serve(service: Service) -> None:
    """``start()``, then ``wait()``, then ``aclose()``.

    A stop asked while the service is still starting (Ctrl-C, SIGTERM: the safe state is applied
    at once) cancels the rest of the start-up, so no output is set up at its ``initial`` level
    after the person asked it to stop; what had started is closed in order.

    Raises:
        Whatever :meth:`Service.start` raises (a busy port, a missing board ...), after the
        close.
    """
    starting = asyncio.ensure_future(service.start())
    stopping = asyncio.ensure_future(service.wait())
    try:
        await asyncio.wait({starting, stopping}, return_when=asyncio.FIRST_COMPLETED)
        if starting.done():
            starting.result()  # a start-up error, as the caller would have seen it
            await stopping
    finally:
        # Stopped while starting: the start-up is cancelled here (Service.start is safe to
        # cancel), and aclose stops what it had begun.
        for task in (starting, stopping):
            task.cancel()
        await asyncio.gather(starting, stopping, return_exceptions=True)
        await service.aclose()

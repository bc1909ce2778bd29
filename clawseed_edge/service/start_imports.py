"""Start-up's imports in a thread, so the event loop answers the gateway's door meanwhile."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import sys
import threading

__all__ = ["RUNTIME_MODULES", "import_in_thread"]

#: What start-up imports after the gateway's door is open (``import_in_thread``).
RUNTIME_MODULES = (
    "clawseed_edge.agent",
    "clawseed_edge.channels.estop",
    "clawseed_edge.config.assembly",
    "clawseed_edge.channels.host",
    "clawseed_edge.channels.gateway.app",
)


async def import_in_thread(modules: tuple[str, ...]) -> None:
    """Import ``modules`` in a short-lived thread while the event loop keeps serving.

    Module imports are thread-safe (one lock per module); the loop gets the GIL back at each
    switch interval, so a request that arrives meanwhile is answered in milliseconds rather
    than after the whole import. An import error is raised here, as the import would.
    """
    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()

    def work() -> None:
        outcome: BaseException | None = None
        try:
            for name in modules:
                importlib.import_module(name)
        except BaseException as exc:  # handed to the awaiting task, not lost in the thread
            outcome = exc
        # A start-up cancelled meanwhile (Ctrl-C) may have ended the loop: nobody waits then.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(_settle, done, outcome)

    # While the thread imports, the loop waits for the GIL at each of its syscalls (accept,
    # recv, send, epoll): at the default 5 ms switch interval a request took several of those
    # waits, the importing thread's CPU growing meanwhile. 0.5 ms while it runs.
    interval = sys.getswitchinterval()
    sys.setswitchinterval(min(interval, 0.0005))
    try:
        threading.Thread(target=work, name="start-imports", daemon=True).start()
        await done
    finally:
        sys.setswitchinterval(interval)


def _settle(future: asyncio.Future[None], exc: BaseException | None) -> None:
    if future.done():
        return
    if exc is None:
        future.set_result(None)
    else:
        future.set_exception(exc)

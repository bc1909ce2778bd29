"""Signals for commands that open pins (``agent``, ``chat``): safe state first, then stop.

* SIGTERM and SIGHUP (``kill``, a closed terminal or SSH session): every output's safe value is
  applied, then the command ends (exit code 128 + the signal number) and disconnects in order.
* SIGINT (Ctrl-C): while a turn runs it aborts that turn; otherwise it stops like SIGTERM.
* SIGUSR1 (``clawseed-edge estop --pid``): applies the safe values and keeps going.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import signal
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from clawseed_edge.config.assembly import Runtime

__all__ = ["SignalStop"]


class SignalStop:
    """Installs the handlers for the life of an ``async with`` block on the running loop.

    The task that entered the block is cancelled when a stop signal arrives (after the safe
    state was applied); it catches ``asyncio.CancelledError`` and returns :meth:`exit_code`.

    Args:
        runtime: The assembled runtime (its peripherals and agent).
        on_stop: Called with the signal once the safe state is applied (to report the pins).
    """

    def __init__(
        self, runtime: Runtime, on_stop: Callable[[signal.Signals], None] | None = None
    ) -> None:
        self.runtime = runtime
        self.signal: signal.Signals | None = None
        self._on_stop = on_stop
        self._session: str | None = None
        self._removers: list[Callable[[], None]] = []
        self._task: asyncio.Task[Any] | None = None
        self._stopping: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> SignalStop:
        from clawseed_edge.peripherals import install_signal_handlers

        loop = asyncio.get_running_loop()
        self._task = asyncio.current_task()
        peripherals = self.runtime.peripherals
        try:
            for sig in (signal.SIGTERM, signal.SIGHUP):
                self._removers.append(
                    install_signal_handlers(
                        loop,
                        peripherals,
                        stop=functools.partial(self._stop, sig),
                        stop_signals=(sig,),
                        estop_signal=None,
                    )
                )
            self._removers.append(
                install_signal_handlers(loop, peripherals, stop=lambda: None, stop_signals=())
            )
            loop.add_signal_handler(signal.SIGINT, self._on_sigint)
            self._removers.append(functools.partial(_remove_handler, loop, signal.SIGINT))
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread
            pass
        return self

    async def __aexit__(self, *exc: object) -> None:
        for remove in reversed(self._removers):
            with contextlib.suppress(ValueError, RuntimeError):
                remove()
        self._removers.clear()

    @contextlib.contextmanager
    def turn(self, session: str) -> Iterator[None]:
        """While this block runs, Ctrl-C aborts the session's turn instead of stopping."""
        self._session = session
        try:
            yield
        finally:
            self._session = None

    def exit_code(self, code: int | None = None) -> int:
        """128 + the signal that stopped the command, else ``code``.

        A turn may end by itself when the stop cancels it (an aborted turn reports an error),
        so a command that returns normally asks here too.

        Raises:
            asyncio.CancelledError: No signal stopped it and no ``code`` was given (the
                cancellation came from elsewhere).
        """
        if self.signal is None:
            if code is None:
                raise asyncio.CancelledError
            return code
        task = asyncio.current_task()
        if task is not None:
            task.uncancel()  # handled: the cleanup that follows must not see a pending cancel
        return 128 + int(self.signal)

    def _on_sigint(self) -> None:
        session = self._session
        if session is not None and self.runtime.agent.abort(session, "interrupted (Ctrl-C)"):
            return
        from clawseed_edge.peripherals import apply_safe_state_all

        async def safe_then_stop() -> None:
            await apply_safe_state_all(self.runtime.peripherals)
            self._stop(signal.SIGINT)

        task = asyncio.get_running_loop().create_task(safe_then_stop())
        self._stopping.add(task)
        task.add_done_callback(self._stopping.discard)

    def _stop(self, sig: signal.Signals) -> None:
        if self.signal is not None:
            return
        self.signal = sig
        if self._on_stop is not None:
            self._on_stop(sig)
        if self._task is not None:
            self._task.cancel()


def _remove_handler(loop: asyncio.AbstractEventLoop, sig: signal.Signals) -> None:
    loop.remove_signal_handler(sig)

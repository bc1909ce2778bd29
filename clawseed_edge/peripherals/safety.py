"""Safe state on every way out: estop, SIGTERM, a signal from ``clawseed-edge estop --pid``.

The runtime applies each output's declared safe value:

* on a clean shutdown: ``Peripheral.disconnect()``;
* on SIGTERM (systemd stop): :func:`install_signal_handlers` applies the safe state, then calls
  the caller's ``stop``;
* on an emergency stop: :func:`apply_safe_state_all` (``clawseed-edge estop``), or SIGUSR1 sent to
  the running process (``clawseed-edge estop --pid PID``), which keeps running; ``estop --pid``
  signals only a process that wrote the handshake of :mod:`~.estop_handshake`;
* at interpreter exit with pins still open: :class:`~.gpio.PiGpio` registers an ``atexit`` hook;
* while the emergency stop is latched (:class:`~clawseed_edge.api.EstopLatch`):
  :func:`connect_peripheral` connects every output at its safe level, never at ``initial``, and
  hands the latch to a peripheral that sets itself up again on its own (a Nucleo that reset
  or was replugged), so it does the same.

What no code can cover (SIGKILL, a kernel panic, power loss) is described in docs/hardware.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import os
import signal
from collections.abc import Callable, Sequence

from clawseed_edge.api import EstopLatch, Peripheral

__all__ = ["apply_safe_state_all", "connect_peripheral", "install_signal_handlers"]

log = logging.getLogger(__name__)


async def apply_safe_state_all(
    peripherals: Sequence[Peripheral], *, timeout_s: float = 2.0
) -> list[str]:
    """Apply the safe state of every peripheral, each bounded by ``timeout_s`` seconds.

    Every peripheral is tried even when one fails or hangs. Returns the failures as
    ``"name: reason"`` lines (empty when all succeeded); never raises for a peripheral's error.
    Safe to cancel (the peripherals already reached keep their safe values).
    """
    failures: list[str] = []
    for p in peripherals:
        try:
            async with asyncio.timeout(timeout_s):
                await p.apply_safe_state()
        except TimeoutError:
            failures.append(f"{p.name}: no answer within {timeout_s:g} s")
        except Exception as exc:
            failures.append(f"{p.name}: {exc}")
    for line in failures:
        log.error("safe state failed: %s", line)
    return failures


async def connect_peripheral(peripheral: Peripheral, latch: EstopLatch | None = None) -> None:
    """Connect ``peripheral``, honouring the emergency-stop ``latch``.

    A peripheral with an ``estop_latch`` attribute (a serial board) gets the latch: it reads
    it each time it sets its devices up (after a board reset too). While the latch holds, a
    peripheral whose ``connect`` takes ``at_safe`` starts every output at its safe level.

    Raises: whatever the peripheral's ``connect`` raises. Cancel-safe as ``connect`` is.
    """
    if latch is not None and hasattr(peripheral, "estop_latch"):
        peripheral.estop_latch = latch
    if (
        latch is not None
        and latch.latched
        and "at_safe" in inspect.signature(peripheral.connect).parameters
    ):
        await peripheral.connect(at_safe=True)  # type: ignore[call-arg]
        return
    await peripheral.connect()


def install_signal_handlers(
    loop: asyncio.AbstractEventLoop,
    peripherals: Sequence[Peripheral],
    *,
    stop: Callable[[], None],
    stop_signals: Sequence[signal.Signals] = (signal.SIGTERM,),
    estop_signal: signal.Signals | None = signal.SIGUSR1,
    timeout_s: float = 2.0,
    home: str | os.PathLike[str] | None = None,
) -> Callable[[], None]:
    """Apply the safe state on signals; returns a function that removes the handlers.

    Args:
        loop: The running loop (handlers run on it, not in a signal context).
        peripherals: The connected peripherals.
        stop: Called after the safe state was applied on a stop signal (e.g. set the main
            task's stop event); the process then shuts down in order and disconnects.
        stop_signals: Signals that mean "apply the safe state, then stop" (SIGTERM by default;
            SIGINT stays with the CLI's KeyboardInterrupt handling).
        estop_signal: A signal that means "apply the safe state and keep running" (SIGUSR1),
            sent by ``clawseed-edge estop --pid``; None to not install it.
        timeout_s: Bound per peripheral.
        home: Where the estop handshake goes (``$CLAWSEED_HOME`` by default): with
            ``estop_signal``, ``$CLAWSEED_HOME/run/estop-<pid>.json`` tells ``estop --pid``
            that this process handles the signal, and how each estop went
            (:mod:`~.estop_handshake`). The returned remover deletes it.
    """
    from .estop_handshake import EstopHandshake  # the service has its own handlers

    tasks: set[asyncio.Task[None]] = set()
    handshake = EstopHandshake(home) if estop_signal is not None else None

    async def safe_then(then: Callable[[], None] | None, why: str) -> None:
        n = len(peripherals)
        log.warning("%s: applying the safe state of %d peripheral%s", why, n, "" if n == 1 else "s")
        failures = await apply_safe_state_all(peripherals, timeout_s=timeout_s)
        if then is None and handshake is not None:
            handshake.write(failures)  # estop --pid waits for this to report the outcome
        if then is not None:
            then()

    def spawn(then: Callable[[], None] | None, why: str) -> None:
        task = loop.create_task(safe_then(then, why))
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    installed: list[signal.Signals] = []
    for sig in stop_signals:
        loop.add_signal_handler(sig, spawn, stop, sig.name)
        installed.append(sig)
    if estop_signal is not None:
        loop.add_signal_handler(estop_signal, spawn, None, f"{estop_signal.name} (estop)")
        installed.append(estop_signal)
    if handshake is not None:
        handshake.write()  # only after the handler is in place: a signal now is handled

    def remove() -> None:
        if handshake is not None:
            handshake.remove()  # first: from now on a SIGUSR1 would no longer be handled
        for sig in installed:
            with contextlib.suppress(ValueError, RuntimeError):
                loop.remove_signal_handler(sig)

    return remove

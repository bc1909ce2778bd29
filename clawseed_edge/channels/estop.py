"""The one emergency stop: every entry point (the web app's STOP, ``POST /api/estop``, the
control socket's ``estop``, SIGUSR1, a stop signal) calls the same :class:`EmergencyStop`.

The stop latches (ISO 13850): its :class:`~clawseed_edge.api.EstopLatch` holds until a person
resets it (:meth:`EmergencyStop.reset`: the CLI over the control socket, the web app, a paired
Telegram user; never the model, an automation, MQTT or MCP), and it is stored in ``state.db``.
While it holds, the SecurityPolicy refuses every call that is not a read (``estop_latched``).

In order, because a turn still running could switch something back on after it went safe:

0. the latch engages (synchronously: the very next call is refused);
1. the stop steps registered with :meth:`EmergencyStop.on_stop` run (every channel aborts the
   turns of its conversations, the service aborts its own turns and pauses the scheduler);
2. every peripheral drives its outputs to their declared safe values
   (:func:`~clawseed_edge.peripherals.safety.apply_safe_state_all`, each bounded in time, all
   tried even when one fails);
3. the latch is stored, then the listeners of :meth:`EmergencyStop.on_stopped` are told the
   outcome (the gateway's ``estop`` frame, the systemd status line).

A person's reset switches no output. A peripheral whose inputs the stop halted (a camera's
motion detector) gets ``resume_inputs()`` called, when it has one, before the reset listeners.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol

from clawseed_edge.api import EstopLatch, LatchState, Peripheral
from clawseed_edge.peripherals.safety import apply_safe_state_all

__all__ = ["EmergencyStop"]

log = logging.getLogger(__name__)

StopStep = Callable[[str], object]
StoppedListener = Callable[[str, list[str]], object]
ResetListener = Callable[[str], object]


class LatchSaver(Protocol):
    """Where the latch is kept across restarts (:class:`~clawseed_edge.state.LatchStore`)."""

    def save(self, state: LatchState) -> Awaitable[None]: ...


class EmergencyStop:
    """Abort every turn in every channel, pause the scheduler, drive every output safe.

    Args:
        peripherals: Whose outputs go safe.
        timeout_s: Bound of each peripheral's safe state, seconds.
        latch: The process's latch (the SecurityPolicy reads the same one); a new one if None.
        store: Where the latch is saved after every change (None: in memory only).
    """

    def __init__(
        self,
        peripherals: Sequence[Peripheral],
        *,
        timeout_s: float = 2.0,
        latch: EstopLatch | None = None,
        store: LatchSaver | None = None,
    ) -> None:
        self._peripherals = peripherals
        self.timeout_s = timeout_s
        #: Holds from the stop until a person's :meth:`reset`.
        self.latch = latch if latch is not None else EstopLatch()
        self.store = store
        self._steps: list[StopStep] = []
        self._listeners: list[StoppedListener] = []
        self._reset_listeners: list[ResetListener] = []
        self._lock = asyncio.Lock()
        #: How many stops ran (status, tests).
        self.count = 0

    @property
    def running(self) -> bool:
        """Whether a stop is under way now."""
        return self._lock.locked()

    def on_stop(self, step: StopStep) -> Callable[[], None]:
        """Run ``step(why)`` first in every stop (abort turns, pause jobs); returns a remover.

        A step must not block: it cancels, and what it cancelled finishes on its own.
        """
        self._steps.append(step)
        return lambda: _discard(self._steps, step)

    def on_stopped(self, listener: StoppedListener) -> Callable[[], None]:
        """Call ``listener(why, failures)`` after the outputs went safe; returns a remover."""
        self._listeners.append(listener)
        return lambda: _discard(self._listeners, listener)

    def on_reset(self, listener: ResetListener) -> Callable[[], None]:
        """Call ``listener(by)`` after a person reset the latch (resume jobs and automations,
        tell the channels); returns a remover."""
        self._reset_listeners.append(listener)
        return lambda: _discard(self._reset_listeners, listener)

    @property
    def latched(self) -> bool:
        """Whether the stop holds (until a person's :meth:`reset`)."""
        return self.latch.latched

    async def reset(self, by: str) -> bool:
        """Release the latch; returns whether it was latched. Only for a person's request: the
        callers are the control socket (the CLI), the web app and a paired Telegram user.

        Switches nothing: every output stays where the stop left it (safe); the scheduler and
        the automations run again, and inputs the stop halted watch again (a peripheral's
        ``resume_inputs()``: a camera's motion detector). Refused (False, nothing done) while a
        stop is under way.
        """
        if self._lock.locked():
            return False
        if not self.latch.release(by):
            return False
        log.warning("emergency stop reset by %s: outputs stay at their safe level", by)
        await self._save()
        for p in self._peripherals:
            resume = getattr(p, "resume_inputs", None)
            if callable(resume):
                try:
                    resume()
                except Exception:  # one input's bug must not keep the others off
                    log.exception("%s: inputs did not resume after the reset", p.name)
        for listener in list(self._reset_listeners):
            try:
                listener(by)
            except Exception:
                log.exception("an emergency-stop reset listener failed")
        return True

    async def _save(self) -> None:
        if self.store is None:
            return
        try:
            await self.store.save(self.latch.state)
        except Exception:  # the latch still holds in memory; the log says it was not stored
            log.exception("could not store the emergency-stop latch in state.db")

    async def __call__(self, why: str, *, latch: bool = True) -> list[str]:
        """Stop; returns the outputs that could not be made safe (``"name: reason"`` lines).

        ``latch`` False: the same stop without the latch (a shutdown by SIGTERM: the service
        is going away, and a restart must not find a stop nobody pressed).

        Never raises for a step's, a peripheral's or a listener's error (each is logged and
        the next one still runs). Not meant to be cancelled: outputs reached before a cancel
        keep their safe values. Two stops at once run one after the other.
        """
        if latch:  # before anything awaits: from now on no call drives an output
            self.latch.engage(why)
        async with self._lock:
            log.warning("%s: aborting every turn and applying the safe state", why)
            self.count += 1
            for step in list(self._steps):
                try:
                    step(why)
                except Exception:  # one step's bug must not keep the outputs from going safe
                    log.exception("an emergency-stop step failed")
            failures = await apply_safe_state_all(self._peripherals, timeout_s=self.timeout_s)
            await self._save()
            for listener in list(self._listeners):
                try:
                    listener(why, failures)
                except Exception:
                    log.exception("an emergency-stop listener failed")
            return failures


def _discard(
    items: list[StopStep] | list[StoppedListener] | list[ResetListener], item: object
) -> None:
    with contextlib.suppress(ValueError):
        items.remove(item)  # type: ignore[arg-type]

"""The one emergency stop: every entry point (the web app's STOP, ``POST /api/estop``, the
control socket's ``estop``, SIGUSR1, a stop signal) calls the same :class:`EmergencyStop`.

In order, because a turn still running could switch something back on after it went safe:

1. the stop steps registered with :meth:`EmergencyStop.on_stop` run (every channel aborts the
   turns of its conversations, the service aborts its own turns and pauses the scheduler);
2. every peripheral drives its outputs to their declared safe values
   (:func:`~clawseed_edge.peripherals.safety.apply_safe_state_all`, each bounded in time, all
   tried even when one fails);
3. the listeners of :meth:`EmergencyStop.on_stopped` are told the outcome (the gateway's
   ``estop`` frame, the systemd status line).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Sequence

from clawseed_edge.api import Peripheral
from clawseed_edge.peripherals.safety import apply_safe_state_all

__all__ = ["EmergencyStop"]

log = logging.getLogger(__name__)

StopStep = Callable[[str], object]
StoppedListener = Callable[[str, list[str]], object]


class EmergencyStop:
    """Abort every turn in every channel, pause the scheduler, drive every output safe.

    Args:
        peripherals: Whose outputs go safe.
        timeout_s: Bound of each peripheral's safe state, seconds.
    """

    def __init__(self, peripherals: Sequence[Peripheral], *, timeout_s: float = 2.0) -> None:
        self._peripherals = peripherals
        self.timeout_s = timeout_s
        self._steps: list[StopStep] = []
        self._listeners: list[StoppedListener] = []
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

    async def __call__(self, why: str) -> list[str]:
        """Stop; returns the outputs that could not be made safe (``"name: reason"`` lines).

        Never raises for a step's, a peripheral's or a listener's error (each is logged and
        the next one still runs). Not meant to be cancelled: outputs reached before a cancel
        keep their safe values. Two stops at once run one after the other.
        """
        async with self._lock:
            log.warning("%s: aborting every turn and applying the safe state", why)
            self.count += 1
            for step in list(self._steps):
                try:
                    step(why)
                except Exception:  # one step's bug must not keep the outputs from going safe
                    log.exception("an emergency-stop step failed")
            failures = await apply_safe_state_all(self._peripherals, timeout_s=self.timeout_s)
            for listener in list(self._listeners):
                try:
                    listener(why, failures)
                except Exception:
                    log.exception("an emergency-stop listener failed")
            return failures


def _discard(items: list[StopStep] | list[StoppedListener], item: object) -> None:
    with contextlib.suppress(ValueError):
        items.remove(item)  # type: ignore[arg-type]

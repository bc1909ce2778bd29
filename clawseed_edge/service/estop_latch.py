"""The service's side of the latched emergency stop (docs/safety.md).

The latch is read back from ``state.db`` before any hardware is connected (a stop that held
when the service went down still holds: every output comes up at its safe level, the scheduler
and the automations stay paused), stored after every change, and released only by a person:
the control socket's ``estop_reset`` (``clawseed-edge estop --reset``), the web app and a
paired Telegram user call :meth:`~clawseed_edge.channels.estop.EmergencyStop.reset`. A reset
switches nothing; it resumes the scheduler and the automations and tells every channel.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from clawseed_edge.api import ESTOP_RESET_HINT, EstopLatch, EstopLatched

if TYPE_CHECKING:
    from clawseed_edge.channels.estop import EmergencyStop
    from clawseed_edge.state import LatchStore, StateDB

__all__ = ["estop_status", "refuse_while_latched", "restore_latch"]


async def restore_latch(db: StateDB) -> tuple[EstopLatch, LatchStore]:
    """The latch as ``state.db`` kept it, and the store that keeps its changes.

    Raises: StateError / ResourceClosed from the database. Safe to cancel.
    """
    from clawseed_edge.state import LatchStore

    store = LatchStore(db)
    latch = EstopLatch()
    latch.restore(await store.load())
    return latch, store


def estop_status(estop: EmergencyStop | None) -> dict[str, Any]:
    """What ``status``, ``hardware status``, the web app and ``/metrics`` show of the stop."""
    if estop is None:
        return {"latched": False, "why": "", "since": 0.0, "reset_by": "", "reset_at": 0.0}
    state = estop.latch.state.to_dict()
    if estop.latched:
        state["how_to_reset"] = ESTOP_RESET_HINT
    return state


def refuse_while_latched(estop: EmergencyStop | None, what: str) -> None:
    """Raise :class:`~clawseed_edge.api.EstopLatched` naming ``what`` (``"cron run-now
    'water'"``) while the stop holds: nothing restarts jobs or rules but a person's reset."""
    if estop is not None and estop.latched:
        raise EstopLatched(estop.latch.refusal(what))

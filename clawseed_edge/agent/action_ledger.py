"""The in-memory :class:`~clawseed_edge.api.ActionLedger`: the policy's default, one process.

A persistent ledger (``clawseed_edge.state.ledger.DeviceLedger`` over ``state.db``) makes the
same limits hold across processes; the config assembly uses that one.
"""

from __future__ import annotations

import logging
from collections import deque

from clawseed_edge.api import ActionLedger, DeviceAction

__all__ = ["DeviceRates", "MemoryActionLedger", "device_key"]

log = logging.getLogger(__name__)


class MemoryActionLedger:
    """Action times per key in this process only (lost when it exits)."""

    def __init__(self) -> None:
        self._times: dict[str, deque[float]] = {}

    def _window(self, key: str, since: float) -> deque[float]:
        window = self._times.setdefault(key, deque())
        while window and window[0] <= since:
            window.popleft()
        return window

    async def recent(self, key: str, since: float) -> list[float]:
        """The times charged to ``key`` after ``since``, oldest first."""
        return list(self._window(key, since))

    async def charge(self, key: str, at: float, cost: int, *, limit: int, since: float) -> bool:
        """Record ``cost`` actions at ``at`` if they fit ``limit`` with those after ``since``."""
        window = self._window(key, since)
        if len(window) + cost > limit:
            return False
        window.extend([at] * cost)
        return True


class DeviceRates:
    """The per-device switch limits (``max_per_minute``), charged to a ledger.

    The policy is the one owner of device write rates: a call is charged what it really
    switches (a blink of count n switches 2n times), per peripheral and device. Both methods
    return a refusal reason for the model, or "" when the call may go ahead.
    """

    WINDOW_S = 60.0

    def __init__(self, ledger: ActionLedger) -> None:
        self.ledger = ledger

    async def check(self, action: DeviceAction, now: float) -> str:
        """Whether the call fits the device's window now (nothing is charged)."""
        limit = action.max_per_minute
        assert limit is not None
        cost = max(1, action.switches)
        if cost > limit:
            # Can never fit: say what would, and do not invite a retry of the same call.
            per_repeat = max(1, cost // max(1, action.repeats))
            fits = limit // per_repeat
            return (
                f"{action.device} may switch at most {limit} times per minute and this call "
                f"needs {cost} switches, so it can never run; call it again with at most "
                f"{fits} repetitions (blink it at most {fits} times)"
            )
        try:
            window = await self.ledger.recent(device_key(action), now - self.WINDOW_S)
        except Exception as exc:
            return _ledger_failed(exc)
        if len(window) + cost > limit:
            # Waiting for the oldest switch that must leave the window for this call to fit.
            wait = self.WINDOW_S - (now - window[len(window) + cost - limit - 1])
            return (
                f"device {action.device!r} reached its max_per_minute={limit}; "
                f"try again in {wait:.0f} s"
            )
        return ""

    async def charge(self, action: DeviceAction, now: float) -> str:
        """Charge the call, checking again in the same step: another process may have
        switched the device since :meth:`check` (or while the user was approving)."""
        limit = action.max_per_minute
        assert limit is not None
        try:
            charged = await self.ledger.charge(
                device_key(action),
                now,
                max(1, action.switches),
                limit=limit,
                since=now - self.WINDOW_S,
            )
        except Exception as exc:
            return _ledger_failed(exc)
        if charged:
            return ""
        return (
            f"device {action.device!r} reached its max_per_minute={limit} (another process "
            "switched it meanwhile); try again in a minute"
        )


def _ledger_failed(exc: Exception) -> str:
    # Fail closed: a limit that protects hardware is not waived because its record is
    # unreadable.
    log.error("the action ledger failed: %r", exc)
    return (
        f"the record of recent device actions cannot be read ({exc}); the device is not "
        "switched. Check state.db in the clawseed-edge home"
    )


def device_key(action: DeviceAction) -> str:
    """The rate window of a device: its peripheral and its name (names may repeat across
    peripherals built by hand; a config makes them unique)."""
    return f"{action.peripheral}/{action.device}"

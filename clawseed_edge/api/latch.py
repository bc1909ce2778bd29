"""The latched emergency stop's state, shared by every layer that must honour it.

ISO 13850 / IEC 60204-1 semantics: a stop command is *maintained* until a deliberate reset,
and the reset restarts nothing. One :class:`EstopLatch` per process: the SecurityPolicy
refuses every call that would drive an output while it is engaged, a serial board that
resets or is replugged sets its outputs up at their safe level, and the service persists it
in ``state.db`` so it survives a restart. Standard library only.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

__all__ = ["ESTOP_LATCHED", "ESTOP_RESET_HINT", "EstopLatch", "LatchState"]

log = logging.getLogger(__name__)

#: The stable code of every refusal while the latch holds (ToolResult.code, HTTP, MQTT).
ESTOP_LATCHED = "estop_latched"

#: How a person resets the latch; every refusal ends with it.
ESTOP_RESET_HINT = (
    "a person resets it with `clawseed-edge estop --reset`, the web app's banner, or /reset "
    "from a paired Telegram user; the reset switches nothing back on"
)

#: Bound of the reason kept and shown (a reason may come from a channel's text).
_MAX_WHY_CHARS = 200

LatchListener = Callable[["EstopLatch"], object]


@dataclass(frozen=True, slots=True)
class LatchState:
    """What the latch holds, as stored and shown.

    Attributes:
        latched: Whether the stop holds.
        why: What stopped it (``"estop over the control socket"``), capped.
        since: Unix time it latched (0.0 when not latched).
        reset_by: Who reset it last (empty before any reset).
        reset_at: Unix time of the last reset (0.0 before any reset).
    """

    latched: bool = False
    why: str = ""
    since: float = 0.0
    reset_by: str = ""
    reset_at: float = 0.0

    def to_dict(self) -> dict[str, object]:
        """For ``status``, the web app and Home Assistant."""
        return asdict(self)


class EstopLatch:
    """The one latched emergency stop of a process (see the module docstring).

    :meth:`engage` and :meth:`release` are synchronous so a refusal holds from the very next
    call on; listeners (persistence, notifications) run after each change, and one listener's
    error never keeps the others from running.

    Args:
        clock: Unix seconds (tests pass a fake).
    """

    def __init__(self, *, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._state = LatchState()
        self._listeners: list[LatchListener] = []
        self._engaged: asyncio.Event | None = None

    @property
    def latched(self) -> bool:
        """Whether the stop holds."""
        return self._state.latched

    @property
    def state(self) -> LatchState:
        """The current state (immutable)."""
        return self._state

    def restore(self, state: LatchState) -> None:
        """Take the state read back from storage (at start), without telling the listeners."""
        self._state = state
        if state.latched and self._engaged is not None:
            self._engaged.set()

    def engage(self, why: str) -> bool:
        """Latch the stop; returns whether it was not latched before (a second stop keeps the
        first reason and time)."""
        if self._state.latched:
            return False
        self._state = LatchState(
            True,
            why[:_MAX_WHY_CHARS],
            self._clock(),
            self._state.reset_by,
            self._state.reset_at,
        )
        if self._engaged is not None:
            self._engaged.set()
        self._tell()
        return True

    def release(self, by: str) -> bool:
        """Reset the latch (a person only: the caller has checked who asks); returns whether
        it was latched. Switches nothing: outputs stay at their safe level."""
        if not self._state.latched:
            return False
        self._state = LatchState(False, "", 0.0, by[:_MAX_WHY_CHARS], self._clock())
        if self._engaged is not None:
            self._engaged = None  # a fresh event for the next stop; waiters saw the last one
        self._tell()
        return True

    async def wait_engaged(self) -> None:
        """Return once the stop is latched (at once if it is). Safe to cancel."""
        if self._state.latched:
            return
        if self._engaged is None:
            self._engaged = asyncio.Event()
        await self._engaged.wait()

    def subscribe(self, listener: LatchListener) -> Callable[[], None]:
        """Call ``listener(latch)`` after every engage and release; returns a remover."""
        self._listeners.append(listener)

        def remove() -> None:
            with contextlib.suppress(ValueError):
                self._listeners.remove(listener)

        return remove

    def refusal(self, what: str) -> str:
        """Why ``what`` (``"'gpio_switch' switches device 'pump'"``) is refused now, and how
        to reset; it ends with the code in brackets (``[estop_latched]``), as a tool's error
        does, so a model's reader and a log see it too."""
        state = self._state
        when = time.strftime("%H:%M:%S", time.localtime(state.since)) if state.since else "?"
        return (
            f"the emergency stop is latched ({state.why or 'estop'}, since {when}), so {what} "
            f"was refused and every output stays at its safe level; {ESTOP_RESET_HINT} "
            f"[{ESTOP_LATCHED}]"
        )

    def _tell(self) -> None:
        for listener in list(self._listeners):
            try:
                listener(self)
            except Exception:  # a broken listener must not undo or hide the stop
                log.exception("an emergency-stop latch listener failed")

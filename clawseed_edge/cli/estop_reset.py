"""``clawseed-edge estop --reset``: a person releases the latched emergency stop.

The running service owns the latch: the reset goes over its control socket (``estop_reset``)
and switches nothing; every output stays at its safe level, jobs and rules run again. With no
service running, the latch kept in ``$CLAWSEED_HOME/state.db`` is released directly, so the
next start finds it reset. ``estop`` without a service latches the same row
(:func:`latch_offline`).
"""

from __future__ import annotations

import asyncio
import getpass
import sys
from pathlib import Path
from typing import TextIO

__all__ = ["latch_offline", "reset_estop"]


def reset_estop(out: TextIO | None = None, *, timeout_s: float = 5.0) -> int:
    """Reset the latch of the running service, or the stored one when none runs; exit code."""
    from clawseed_edge.config.paths import clawseed_home
    from clawseed_edge.service import ControlError, control_request, find_control_socket

    out = out or sys.stdout
    by = f"{_user()} with `clawseed-edge estop --reset`"
    path = find_control_socket(clawseed_home())
    try:
        answer = asyncio.run(control_request(path, "estop_reset", timeout_s=timeout_s, by=by))
    except ControlError as exc:
        cause = exc.__cause__
        if not isinstance(cause, ConnectionRefusedError | FileNotFoundError):
            print(
                f"error: the running service did not reset its emergency stop: {exc}",
                file=sys.stderr,
            )
            return 1
        return _reset_stored(clawseed_home() / "state.db", by, out)
    if not answer.get("reset"):
        print("estop: the emergency stop was not latched; nothing to reset", file=out)
        return 0
    print(
        "estop: reset; every output stays at its safe level, the scheduler and the "
        "automations run again",
        file=out,
    )
    return 0


def latch_offline(home: Path, why: str) -> None:
    """Latch the stop in ``home``'s state.db (``estop`` applied by this process, no service):
    the next service start keeps every output safe until a person resets it."""
    asyncio.run(_change(home / "state.db", why=why))


def _reset_stored(db_path: Path, by: str, out: TextIO) -> int:
    if not db_path.exists():
        print("estop: no service runs and no emergency stop is stored; nothing to reset", file=out)
        return 0
    was = asyncio.run(_change(db_path, by=by))
    if not was:
        print("estop: the stored emergency stop was not latched; nothing to reset", file=out)
        return 0
    print(
        f"estop: the stored emergency stop is reset ({db_path}); no output was switched", file=out
    )
    return 0


async def _change(db_path: Path, *, why: str | None = None, by: str | None = None) -> bool:
    """Latch (``why``) or release (``by``) the stored latch; returns whether it changed."""
    from clawseed_edge.api import EstopLatch
    from clawseed_edge.state import LatchStore, StateDB

    async with await StateDB.open(db_path) as db:
        store = LatchStore(db)
        latch = EstopLatch()
        latch.restore(await store.load())
        changed = latch.engage(why) if why is not None else latch.release(by or "a person")
        if changed:
            await store.save(latch.state)
        return changed


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no passwd entry (a container's uid)
        return "a person at the board"

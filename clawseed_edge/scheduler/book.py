"""The jobs in state.db for a process that does not run them (``agent``, ``chat``).

The cron tools work on a :class:`JobBook` as on the service's :class:`~.runner.Scheduler`: a
job the model adds or removes is written to ``state.db`` exactly as ``clawseed-edge cron add``
writes it, and the running service is told to look again (over its control socket, which the
caller passes in as ``notify``), so it schedules the job without a restart.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import tzinfo

from .clock import Clock, SystemClock
from .schedule import ZoneSource
from .store import JobStore

__all__ = ["JobBook"]

#: What a tool says when no service runs to be told (the job waits in state.db).
NO_SERVICE_NOTE = "No service runs now: `clawseed-edge run` runs it from its next start."


class JobBook:
    """``store``, ``zone`` and ``clock`` as a scheduler has them, without running any job.

    Args:
        store: The jobs in ``state.db``.
        zone: The ``[scheduler] timezone`` (a ``tzinfo`` or a name, resolved at first use).
        notify: Tells a running service that the jobs changed; returns False when none runs.
        clock: Wall-clock time.
    """

    def __init__(
        self,
        store: JobStore,
        *,
        zone: tzinfo | str,
        notify: Callable[[], Awaitable[bool]],
        clock: Clock | None = None,
    ) -> None:
        self.store = store
        self._zone = ZoneSource(zone)
        self.clock: Clock = clock or SystemClock()
        self._notify = notify

    @property
    def zone(self) -> tzinfo:
        """The zone cron and one-off times are read in (resolved at first use)."""
        return self._zone.get()

    async def jobs_changed(self) -> str | None:
        """Tell the running service; a note for the model when none runs, else None."""
        return None if await self._notify() else NO_SERVICE_NOTE

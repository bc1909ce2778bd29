"""Building the service's scheduler from a config: store, executor, declared jobs, cron tools;
and the cron tools alone over state.db for ``agent`` and ``chat`` (:func:`register_job_book`)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from clawseed_edge.api import ConfigInvalid

from .book import JobBook
from .clock import Clock, SystemClock
from .jobs import JobExecutor, job_from_settings
from .runner import Scheduler
from .store import JobStore
from .tools import cron_tools

if TYPE_CHECKING:
    from clawseed_edge.config.assembly import Runtime
    from clawseed_edge.state import StateDB

__all__ = ["register_job_book", "scheduler_for"]

log = logging.getLogger("clawseed_edge.scheduler")


async def scheduler_for(
    runtime: Runtime,
    state: StateDB,
    *,
    publish: Callable[[dict[str, Any]], None] | None = None,
    clock: Clock | None = None,
) -> Scheduler:
    """The scheduler ``[scheduler]`` and ``[[jobs]]`` describe, its cron tools registered with
    the runtime's agent and the declared jobs synced into state.db (not started yet).

    Raises:
        ConfigInvalid: More declared jobs than ``[scheduler] max_jobs``.
    """
    loaded = runtime.loaded
    settings = loaded.config.scheduler
    clock = clock or SystemClock()
    store = JobStore(state, max_jobs=settings.max_jobs)
    if len(loaded.config.jobs) > settings.max_jobs:
        raise ConfigInvalid(
            f"{len(loaded.config.jobs)} jobs are declared, more than max_jobs = "
            f"{settings.max_jobs}; raise it or declare fewer",
            file=loaded.source,
            key="scheduler.max_jobs",
        )
    now = clock.now()
    removed = await store.sync_declared([job_from_settings(j, now) for j in loaded.config.jobs])
    if removed:
        log.info("jobs no longer declared in the config were removed: %s", ", ".join(removed))
    scheduler = Scheduler(
        store,
        JobExecutor(runtime.agent, publish=publish, clock=clock.now),
        zone=settings.timezone,  # resolved at first use (ZoneSource)
        clock=clock,
        max_concurrent=settings.max_concurrent_runs,
        keep_runs=settings.keep_runs,
    )
    supervised = loaded.config.autonomy.level == "supervised"
    runtime.agent.registry.register_many(
        cron_tools(scheduler, runtime.agent, supervised=supervised)
    )
    return scheduler


def register_job_book(
    runtime: Runtime, state: StateDB, *, notify: Callable[[], Awaitable[bool]]
) -> JobBook | None:
    """The cron tools for a process that runs no jobs (``agent``, ``chat``): they write to
    ``state.db`` as ``cron add`` does and ``notify`` the running service. None (no tools)
    when ``[scheduler] enabled = false``, as in a service."""
    settings = runtime.loaded.config.scheduler
    if not settings.enabled:
        return None
    book = JobBook(
        JobStore(state, max_jobs=settings.max_jobs),
        zone=settings.timezone,  # resolved at first use (ZoneSource)
        notify=notify,
    )
    supervised = runtime.loaded.config.autonomy.level == "supervised"
    runtime.agent.registry.register_many(cron_tools(book, runtime.agent, supervised=supervised))
    return book

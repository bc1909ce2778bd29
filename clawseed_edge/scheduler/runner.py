"""Scheduler: the loop that starts due jobs, one task per run, with an injectable clock.

One pass (:meth:`Scheduler.run_due`): give new jobs their next run; start every enabled job
whose next run has come, after moving its next run past *now* (so a late or long run never
causes a burst of catch-up runs); a job still running from last time is not started again
(the run is recorded as ``skipped``). At start (:meth:`Scheduler.prepare`) runs left
``running`` by a stopped service are marked failed, and runs missed while the service was
down follow each job's ``missed`` policy: ``skip`` records one ``missed`` run, ``run_once``
runs the job once now, however many runs were missed.

An emergency stop pauses the scheduler (:meth:`Scheduler.pause`): running jobs are cancelled
(their runs recorded as failed with the reason) and every run that comes due is recorded as
``skipped`` until :meth:`Scheduler.resume` (``clawseed-edge cron resume``), so a job scheduled
after the stop cannot switch an output back on. A restart of the service also resumes.

The loop sleeps until the earliest next run (the real clock at most a minute at a time) or
until :meth:`Scheduler.wake` is called after a change.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable
from dataclasses import replace
from datetime import datetime, tzinfo
from typing import Protocol

from clawseed_edge.api import Lifecycle

from .clock import Clock, SystemClock
from .jobs import Job, JobFailed
from .schedule import ZoneSource
from .store import JobRun, JobStore

__all__ = ["JobRunner", "Scheduler"]

log = logging.getLogger("clawseed_edge.scheduler")

#: The signals a service stops on (SIGUSR1 is the emergency stop, and the service goes on).
_SHUTDOWN_SIGNALS = frozenset({"SIGTERM", "SIGHUP", "SIGINT"})

#: Keep at most ``keep_runs`` rows per job, pruned every this many runs.
PRUNE_EVERY = 20
#: With nothing due, the jobs are read again at least this often (seconds): a change the
#: service was not told of (``cron add`` found its control socket busy) is seen this late.
RECHECK_S = 600.0


class JobRunner(Protocol):
    """Runs one job's action (:class:`~clawseed_edge.scheduler.jobs.JobExecutor`)."""

    def run(self, job: Job) -> Awaitable[str]: ...


class Scheduler:
    """Runs the jobs of a :class:`JobStore` on time.

    Args:
        store: Jobs and runs (state.db).
        runner: Runs one job (raises on failure; the error is recorded).
        zone: The zone cron and one-off times are read in: a ``tzinfo``, or a
            ``[scheduler] timezone`` name (``""``: the system's) resolved at first use.
        clock: Unix seconds and sleeps (tests pass a
            :class:`~clawseed_edge.scheduler.clock.ManualClock`).
        max_concurrent: Jobs running at once (others wait their turn).
        keep_runs: Run rows kept per job.
    """

    def __init__(
        self,
        store: JobStore,
        runner: JobRunner,
        *,
        zone: tzinfo | str,
        clock: Clock | None = None,
        max_concurrent: int = 2,
        keep_runs: int = 100,
    ) -> None:
        self.store = store
        self.runner = runner
        self._zone = ZoneSource(zone)
        self.clock: Clock = clock or SystemClock()
        self.keep_runs = keep_runs
        self.state = Lifecycle.UNOPENED
        self._slots = asyncio.Semaphore(max_concurrent)
        self._running: dict[str, asyncio.Task[None]] = {}
        self._changed = asyncio.Event()
        self._loop_task: asyncio.Task[None] | None = None
        self._cancelled: dict[str, str] = {}
        #: Why the scheduler is paused (an emergency stop), or None while it runs jobs.
        self.paused: str | None = None

    @property
    def zone(self) -> tzinfo:
        """The zone cron and one-off times are read in (resolved at first use)."""
        return self._zone.get()

    # --- lifecycle -----------------------------------------------------------------------

    async def start(self) -> None:
        """Prepare (missed runs) and start the loop task. Cancel-safe."""
        await self.prepare()
        self.state = Lifecycle.OPEN
        self._loop_task = asyncio.create_task(self._loop(), name="scheduler")

    async def aclose(self, grace_s: float = 2.0) -> None:
        """Stop the loop; give running jobs ``grace_s`` to finish, then cancel them
        (their runs are recorded as failed). Idempotent."""
        if self.state is Lifecycle.CLOSED:
            return
        self.state = Lifecycle.CLOSED
        if self._loop_task is not None:
            self._loop_task.cancel()
            await asyncio.gather(self._loop_task, return_exceptions=True)
        tasks = list(self._running.values())
        if tasks:
            _done, pending = await asyncio.wait(tasks, timeout=grace_s)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)

    def wake(self) -> None:
        """Look at the jobs again now (after one was added, removed or changed)."""
        self._changed.set()

    async def jobs_changed(self) -> str | None:
        """What the cron tools call after a change: :meth:`wake` (nothing to tell the model)."""
        self.wake()
        return None

    def pause(self, why: str) -> list[str]:
        """Stop running jobs now and run none until :meth:`resume`; returns the jobs cancelled.

        Runs that come due meanwhile are recorded as ``skipped`` (no burst at resume).
        """
        self.paused = why
        cancelled = []
        for name, task in list(self._running.items()):
            if not task.done():
                self._cancelled[name] = f"cancelled: {why}"
                task.cancel()
                cancelled.append(name)
        if cancelled:
            log.warning("%s: cancelled the running job(s) %s", why, ", ".join(cancelled))
        if why in _SHUTDOWN_SIGNALS:
            # The process is ending: there is nothing to resume, only a stop to log.
            log.info("%s: the scheduler stopped running jobs for the shutdown", why)
        else:
            log.warning(
                "%s: the scheduler is paused; `clawseed-edge cron resume` runs jobs again", why
            )
        self._changed.set()
        return cancelled

    def resume(self) -> bool:
        """Run jobs again after :meth:`pause`; returns whether it was paused."""
        was, self.paused = self.paused, None
        if was is not None:
            log.info("the scheduler runs jobs again (it was paused: %s)", was)
        self._changed.set()
        return was is not None

    def is_running(self, name: str) -> bool:
        return name in self._running

    async def wait_idle(self) -> None:
        """Wait until no job is running (tests; the drift benchmark)."""
        while self._running:
            await asyncio.gather(*list(self._running.values()), return_exceptions=True)

    # --- one pass ------------------------------------------------------------------------

    async def prepare(self) -> None:
        """At start: fail runs a stopped service left ``running``, give every job its next run
        and apply each job's missed-run policy."""
        now = self.clock.now()
        failed = await self.store.interrupted(now)
        if failed:
            log.warning("%d job run(s) were interrupted when the service stopped", failed)
        for job in await self.store.list():
            if not job.enabled:
                continue
            if job.next_run is None:
                job = await self._schedule_new(job, now)
            if job.next_run is None or job.next_run >= now:
                continue
            if job.missed == "run_once":
                log.info(
                    "job %s missed its run at %s; running it once now",
                    job.name,
                    self._local(job.next_run),
                )
                continue  # still due: the first pass runs it once and moves next_run past now
            await self.store.start_run(
                job.name,
                job.next_run,
                now,
                status="missed",
                error=f"missed: the service was not running at {self._local(job.next_run)}; "
                "skipped (missed = skip)",
            )
            following = job.schedule.next_after(now, self.zone, job.created_at)
            await self.store.set_times(
                job.name, next_run=following, enabled=None if following is not None else False
            )

    async def run_due(self) -> list[str]:
        """Start every job whose time has come; returns the names started."""
        now = self.clock.now()
        started = []
        for job in await self.store.list():
            if not job.enabled:
                continue
            if job.next_run is None:
                job = await self._schedule_new(job, now)
            if job.next_run is None or job.next_run > now:
                continue
            following = job.schedule.next_after(max(now, job.next_run), self.zone, job.created_at)
            keep = None if following is not None else False  # a one-off is done after this
            if self.paused is not None or job.name in self._running:
                reason = (
                    f"skipped: the scheduler is paused ({self.paused}); `clawseed-edge cron "
                    "resume` runs jobs again"
                    if self.paused is not None
                    else "skipped: the previous run was still going (a job never overlaps itself)"
                )
                await self.store.start_run(
                    job.name, job.next_run, now, status="skipped", error=reason
                )
                await self.store.set_times(job.name, next_run=following, enabled=keep)
                continue
            await self.store.set_times(job.name, next_run=following, last_run=now, enabled=keep)
            self._launch(job, job.next_run)
            started.append(job.name)
        return started

    async def run_now(self, name: str) -> JobRun:
        """Run a job once now, outside its schedule, and wait for it; returns the run.

        Raises:
            JobFailed: No such job, or it is running already.
        """
        job = await self.store.get(name)
        if job is None:
            raise JobFailed(f"no job is named {name!r}; see `clawseed-edge cron list`")
        if self.paused is not None:
            raise JobFailed(
                f"the scheduler is paused ({self.paused}); run `clawseed-edge cron resume` first"
            )
        if name in self._running:
            raise JobFailed(f"job {name!r} is running already; a job never overlaps itself")
        task = self._launch(job, self.clock.now())
        await asyncio.shield(task)
        runs = await self.store.runs(name, limit=1)
        return runs[0]

    async def next_wake(self) -> float | None:
        """The earliest next run of an enabled job, or None."""
        times = [
            j.next_run for j in await self.store.list() if j.enabled and j.next_run is not None
        ]
        return min(times) if times else None

    # --- internals -----------------------------------------------------------------------

    async def _schedule_new(self, job: Job, now: float) -> Job:
        next_run = job.schedule.first_run(now, self.zone, job.created_at)
        await self.store.set_times(job.name, next_run=next_run)
        return replace(job, next_run=next_run)

    def _launch(self, job: Job, scheduled_for: float) -> asyncio.Task[None]:
        task = asyncio.create_task(self._run_one(job, scheduled_for), name=f"job-{job.name}")
        self._running[job.name] = task
        name = job.name
        task.add_done_callback(lambda t: self._finished(name, t))
        return task

    def _finished(self, name: str, task: asyncio.Task[None]) -> None:
        if self._running.get(name) is task:
            del self._running[name]
            self._cancelled.pop(name, None)
        self._changed.set()  # the loop may have skipped it meanwhile; look again

    async def _run_one(self, job: Job, scheduled_for: float) -> None:
        async with self._slots:
            run_id = await self.store.start_run(job.name, scheduled_for, self.clock.now())
            status, output, error = "failed", "", None
            try:
                output = await self.runner.run(job)
                status = "ok"
            except asyncio.CancelledError:
                error = self._cancelled.get(
                    job.name, "cancelled: the service stopped during the run"
                )
                if job.name in self._cancelled:
                    return  # paused by an emergency stop: recorded, and the task ends quietly
                raise
            except Exception as exc:  # every failure is recorded with its error, then logged
                error = str(exc) or type(exc).__name__
                if not isinstance(exc, JobFailed):
                    log.exception("job %s raised", job.name)
                else:
                    log.warning("job %s failed: %s", job.name, error)
            finally:
                with contextlib.suppress(Exception):
                    await asyncio.shield(
                        self.store.finish_run(run_id, self.clock.now(), status, output, error)
                    )
                if run_id % PRUNE_EVERY == 0:
                    with contextlib.suppress(Exception):
                        await self.store.prune_runs(job.name, self.keep_runs)

    async def _loop(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            self._changed.clear()  # a change from here on wakes the sleep below
            try:
                await self.run_due()
                wake = await self.next_wake()
            except Exception:  # a database hiccup must not end the schedule
                log.exception("the scheduler's pass failed; trying again in a minute")
                wake = self.clock.now() + 60.0
            until = wake if wake is not None else self.clock.now() + 3600.0
            recheck = loop.time() + RECHECK_S
            # The real clock returns at least once a minute, to see a wall clock that moved;
            # the jobs change through wake(): sleep on until one is due without reading the
            # database again (two queries a minute woke its thread and the loop a dozen times).
            while (
                not await self._sleep(until) and self.clock.now() < until and loop.time() < recheck
            ):
                pass

    async def _sleep(self, until: float) -> bool:
        """Sleep until ``until`` (or the clock's own limit); True when woken by a change."""
        sleeper = asyncio.ensure_future(self.clock.sleep_until(until))
        changed = asyncio.ensure_future(self._changed.wait())
        try:
            await asyncio.wait({sleeper, changed}, return_when=asyncio.FIRST_COMPLETED)
            return changed.done() and not changed.cancelled()
        finally:
            for f in (sleeper, changed):
                f.cancel()
            await asyncio.gather(sleeper, changed, return_exceptions=True)

    def _local(self, stamp: float) -> str:
        return datetime.fromtimestamp(stamp, self.zone).strftime("%Y-%m-%d %H:%M %Z")

"""JobStore: jobs and their run history in ``state.db`` (tables ``jobs`` and ``job_runs``).

The CLI uses it directly when no service runs; the service's scheduler uses the same object,
so a job added by ``clawseed-edge cron add`` while the service is down is there at its start.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from clawseed_edge.api import ClawseedError

from .jobs import ActionKind, Job
from .schedule import Schedule

if TYPE_CHECKING:
    from clawseed_edge.state import StateDB

__all__ = ["JobRun", "JobStore", "TooManyJobs"]

_COLUMNS = (
    "name, schedule, action, deliver, missed, enabled, origin, created_at, next_run, last_run"
)


class TooManyJobs(ClawseedError, ValueError):
    """state.db holds ``[scheduler] max_jobs`` jobs already."""

    code = "scheduler_too_many_jobs"


@dataclass(frozen=True, slots=True)
class JobRun:
    """One run of a job: ``status`` is running, ok, failed, skipped or missed."""

    id: int
    job: str
    scheduled_for: float
    started_at: float
    finished_at: float | None
    status: str
    output: str
    error: str | None


def _row_to_job(row: Sequence[Any]) -> Job:
    name, schedule, action, deliver, missed, enabled, origin, created, next_run, last_run = row
    action_data = json.loads(action)
    kind: ActionKind = (
        "prompt" if "prompt" in action_data else "tool" if "tool" in action_data else "shell"
    )
    return Job(
        name=name,
        schedule=Schedule.from_json(schedule),
        kind=kind,
        action=action_data,
        deliver=tuple(json.loads(deliver)),
        missed=missed,
        enabled=bool(enabled),
        origin=origin,
        created_at=created,
        next_run=next_run,
        last_run=last_run,
    )


class JobStore:
    """Jobs and runs over an open :class:`~clawseed_edge.state.StateDB`.

    Every method is one statement (or one ``BEGIN IMMEDIATE`` transaction) and safe to cancel.
    """

    def __init__(self, db: StateDB, *, max_jobs: int = 50) -> None:
        self.db = db
        self.max_jobs = max_jobs

    async def add(self, job: Job, *, replace_existing: bool = False) -> bool:
        """Store ``job``; returns False when the name is taken (and ``replace_existing`` is off).

        Raises:
            TooManyJobs: ``max_jobs`` jobs exist already.
        """
        async with self.db.immediate() as conn:
            async with conn.execute("SELECT COUNT(*) FROM jobs WHERE name != ?", (job.name,)) as c:
                count = (await c.fetchone())[0]
            async with conn.execute("SELECT 1 FROM jobs WHERE name = ?", (job.name,)) as c:
                exists = await c.fetchone() is not None
            if exists and not replace_existing:
                return False
            if count >= self.max_jobs:
                raise TooManyJobs(
                    f"there are {count} jobs already ([scheduler] max_jobs = {self.max_jobs}); "
                    "remove one (`clawseed-edge cron remove NAME`) or raise the limit"
                )
            await conn.execute(
                f"INSERT OR REPLACE INTO jobs ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (
                    job.name,
                    job.schedule.to_json(),
                    json.dumps(dict(job.action)),
                    json.dumps(list(job.deliver)),
                    job.missed,
                    int(job.enabled),
                    job.origin,
                    job.created_at,
                    job.next_run,
                    job.last_run,
                ),
            )
        return True

    async def get(self, name: str) -> Job | None:
        rows = await self.db.fetchall(f"SELECT {_COLUMNS} FROM jobs WHERE name = ?", (name,))
        return _row_to_job(rows[0]) if rows else None

    async def list(self) -> list[Job]:
        """Every job, by name."""
        rows = await self.db.fetchall(f"SELECT {_COLUMNS} FROM jobs ORDER BY name")
        return [_row_to_job(r) for r in rows]

    async def remove(self, name: str) -> bool:
        """Delete a job and its runs; returns whether it existed."""
        changed = await self.db.execute("DELETE FROM jobs WHERE name = ?", (name,))
        await self.db.execute("DELETE FROM job_runs WHERE job = ?", (name,))
        return changed > 0

    async def set_times(
        self,
        name: str,
        *,
        next_run: float | None,
        last_run: float | None = None,
        enabled: bool | None = None,
    ) -> None:
        """Record a job's next run (and its last start, and whether it stays enabled)."""
        sets, params = ["next_run = ?"], [next_run]
        if last_run is not None:
            sets.append("last_run = ?")
            params.append(last_run)
        if enabled is not None:
            sets.append("enabled = ?")
            params.append(int(enabled))
        await self.db.execute(f"UPDATE jobs SET {', '.join(sets)} WHERE name = ?", [*params, name])

    async def sync_declared(self, declared: Sequence[Job]) -> builtins.list[str]:
        """Make the ``config`` jobs those declared: add new, update changed, drop removed ones.

        A declared job whose schedule did not change keeps its next run (a restart does not
        move it); a changed one gets its next run computed again by the scheduler. Jobs of
        other origins are untouched, but a declared name wins over one (replacing it).
        Returns the names removed.
        """
        current = {j.name: j for j in await self.list()}
        for job in declared:
            old = current.get(job.name)
            if old is not None and old.origin == "config" and _same(old, job):
                continue
            await self.add(replace(job, next_run=None), replace_existing=True)
        keep = {j.name for j in declared}
        removed = [j.name for j in current.values() if j.origin == "config" and j.name not in keep]
        for name in removed:
            await self.remove(name)
        return removed

    # --- runs ------------------------------------------------------------------------------

    async def start_run(
        self,
        job: str,
        scheduled_for: float,
        started_at: float,
        status: str = "running",
        error: str | None = None,
    ) -> int:
        """Insert a run row; returns its id."""
        async with self.db.immediate() as conn:
            cur = await conn.execute(
                "INSERT INTO job_runs (job, scheduled_for, started_at, status, error) "
                "VALUES (?,?,?,?,?)",
                (job, scheduled_for, started_at, status, error),
            )
            return int(cur.lastrowid or 0)

    async def finish_run(
        self,
        run_id: int,
        finished_at: float,
        status: str,
        output: str = "",
        error: str | None = None,
    ) -> None:
        await self.db.execute(
            "UPDATE job_runs SET finished_at = ?, status = ?, output = ?, error = ? WHERE id = ?",
            (finished_at, status, output, error, run_id),
        )

    async def runs(self, job: str | None = None, limit: int = 20) -> builtins.list[JobRun]:
        """The latest runs (of one job, or of all), newest first."""
        where, params = ("WHERE job = ?", [job]) if job else ("", [])
        rows = await self.db.fetchall(
            "SELECT id, job, scheduled_for, started_at, finished_at, status, output, error "
            f"FROM job_runs {where} ORDER BY id DESC LIMIT ?",
            [*params, max(1, min(limit, 1000))],
        )
        return [JobRun(*r) for r in rows]

    async def prune_runs(self, job: str, keep: int) -> None:
        """Keep the newest ``keep`` runs of a job."""
        await self.db.execute(
            "DELETE FROM job_runs WHERE job = ? AND id NOT IN "
            "(SELECT id FROM job_runs WHERE job = ? ORDER BY id DESC LIMIT ?)",
            (job, job, keep),
        )

    async def interrupted(self, finished_at: float) -> int:
        """Mark runs still ``running`` (the service stopped mid-run) as failed; returns how many."""
        return await self.db.execute(
            "UPDATE job_runs SET status = 'failed', finished_at = ?, "
            "error = 'interrupted: the service stopped during the run' WHERE status = 'running'",
            (finished_at,),
        )


def _same(a: Job, b: Job) -> bool:
    return (a.schedule, dict(a.action), a.deliver, a.missed, a.enabled) == (
        b.schedule,
        dict(b.action),
        b.deliver,
        b.missed,
        b.enabled,
    )

"""Scheduled jobs: cron expressions, intervals and one-off times, persisted in state.db.

The service (``clawseed-edge run``) builds a :class:`Scheduler` with :func:`scheduler_for`;
the CLI (``clawseed-edge cron``) uses :class:`JobStore` directly when no service runs. See
docs/scheduler.md for the DST rules and the missed-run policies.
"""

from .book import JobBook
from .clock import Clock, ManualClock, SystemClock
from .jobs import Job, JobExecutor, JobFailed
from .runner import Scheduler
from .schedule import Schedule, local_zone, zone_named
from .setup import register_job_book, scheduler_for
from .store import JobRun, JobStore, TooManyJobs
from .tools import CronAdd, CronList, CronRemove, cron_tools

__all__ = [
    "Clock",
    "CronAdd",
    "CronList",
    "CronRemove",
    "Job",
    "JobBook",
    "JobExecutor",
    "JobFailed",
    "JobRun",
    "JobStore",
    "ManualClock",
    "Schedule",
    "Scheduler",
    "SystemClock",
    "TooManyJobs",
    "cron_tools",
    "local_zone",
    "register_job_book",
    "scheduler_for",
    "zone_named",
]

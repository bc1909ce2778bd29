"""The agent's cron tools: ``cron_add``, ``cron_list``, ``cron_remove``.

``cron_add`` and ``cron_remove`` are ``act`` (supervised autonomy asks first); ``cron_list``
reads. A scheduled shell command is checked against the shell allowlist when it is created
(``describe_access``), and in supervised autonomy its creation always asks a human, even when
``cron_add`` is auto-approved. A tool job's tool must exist and its arguments must match the
tool's schema when it is created; when it runs, it passes the SecurityPolicy like any call.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from clawseed_edge.api import (
    BaseTool,
    DeviceAction,
    ResourceAccess,
    RiskClass,
    ToolCall,
    ToolContext,
    ToolResult,
)

from .jobs import DELIVERIES, Job
from .schedule import Schedule, describe_runs, format_local
from .store import TooManyJobs

if TYPE_CHECKING:
    from clawseed_edge.agent import Agent

    from .book import JobBook
    from .runner import Scheduler

__all__ = ["CronAdd", "CronList", "CronRemove", "check_tool_job", "cron_tools"]


def cron_tools(scheduler: Scheduler | JobBook, agent: Agent, *, supervised: bool) -> list[BaseTool]:
    """The three cron tools over ``scheduler`` (the service's, or a :class:`~.book.JobBook`
    where no job runs), checking tool jobs against ``agent``'s tools."""
    return [
        CronAdd(scheduler, agent, supervised=supervised),
        CronList(scheduler),
        CronRemove(scheduler),
    ]


class _CronTool(BaseTool):
    def __init__(self, scheduler: Scheduler | JobBook) -> None:
        self.scheduler = scheduler


class CronAdd(_CronTool):
    """Schedule a job: a prompt for the agent, a direct tool call, or a shell command."""

    name = "cron_add"
    description = (
        "Schedule a job. Give a name, exactly one schedule (cron: five-field cron expression "
        "in the device's time zone, e.g. '0 0 * * *' for midnight; every: an interval like "
        "'10m'; at: a one-off local time like '2026-12-24T18:00') and exactly one action "
        "(tool + arguments: call a tool directly, e.g. gpio_switch to turn a light off; prompt: "
        "ask yourself something at that time; shell: run a command). Returns the schedule in "
        "words and the next three run times."
    )
    risk = RiskClass.ACT
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "name": {
                "type": "string",
                "pattern": "^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$",
                "description": "A short unique name, e.g. porch_light_off.",
            },
            "cron": {"type": "string", "maxLength": 200},
            "every": {"type": "string", "maxLength": 40},
            "at": {"type": "string", "maxLength": 40},
            "tool": {"type": "string", "maxLength": 64},
            "arguments": {"type": "object"},
            "prompt": {"type": "string", "maxLength": 4000},
            "shell": {"type": "string", "maxLength": 1000},
            "deliver": {
                "type": "array",
                "items": {"enum": list(DELIVERIES)},
                "maxItems": 3,
                "description": "Where the result goes (default: log).",
            },
            "missed": {
                "enum": ["skip", "run_once"],
                "description": "After downtime: skip the missed run or run it once.",
            },
        },
        "required": ["name"],
        "additionalProperties": False,
    }

    def __init__(self, scheduler: Scheduler | JobBook, agent: Agent, *, supervised: bool) -> None:
        super().__init__(scheduler)
        self.agent = agent
        self.supervised = supervised

    def describe_access(self, arguments: Mapping[str, Any]) -> ResourceAccess | None:
        shell = arguments.get("shell")
        return ResourceAccess(command=shell) if isinstance(shell, str) else None

    def describe_action(self, arguments: Mapping[str, Any]) -> DeviceAction | None:
        # Creating a scheduled shell command asks a human in supervised autonomy, even when
        # cron_add itself is auto-approved: the command will run later with no one watching.
        shell = arguments.get("shell")
        if not (self.supervised and isinstance(shell, str)):
            return None
        return DeviceAction(
            "scheduler",
            "job",
            "write",
            requires_approval=True,
            summary=f"schedule the shell command `{shell[:80]}` as job "
            f"{str(arguments.get('name', '?'))[:64]!r}",
        )

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        try:
            job = self._job(arguments)
        except ValueError as exc:
            return ToolResult.fail(str(exc))
        scheduler = self.scheduler
        now = scheduler.clock.now()
        if job.schedule.kind == "at" and job.schedule.once_at(scheduler.zone) <= now:
            return ToolResult.fail("at: that time has passed; give a time in the future")
        job = replace(job, next_run=job.schedule.first_run(now, scheduler.zone, job.created_at))
        try:
            added = await scheduler.store.add(job)
        except TooManyJobs as exc:
            return ToolResult.fail(str(exc))
        if not added:
            return ToolResult.fail(
                f"a job named {job.name!r} exists; pick another name or remove it first"
            )
        note = await scheduler.jobs_changed()
        shown = describe_runs(job.schedule, scheduler.zone, now, job.created_at)
        text = (
            f"Scheduled job {job.name!r}: {job.summary()}.\nWhen: {shown['schedule']}.\n"
            f"Next runs: {'; '.join(shown['next_runs'])}."
        )
        if note:
            text += f"\n{note}"
        return ToolResult.ok(text, data={"job": job.name, **shown})

    def _job(self, arguments: Mapping[str, Any]) -> Job:
        schedules = [k for k in ("cron", "every", "at") if arguments.get(k)]
        if len(schedules) != 1:
            raise ValueError(
                "give exactly one schedule: cron (e.g. '0 0 * * *'), every (e.g. '10m') or at "
                f"(e.g. '2026-12-24T18:00'); got {', '.join(schedules) or 'none'}"
            )
        schedule = Schedule.parse(schedules[0], arguments[schedules[0]])
        tool = arguments.get("tool")
        if tool:
            self._check_tool(str(tool), dict(arguments.get("arguments") or {}))
        return Job.build(
            str(arguments["name"]),
            schedule,
            prompt=arguments.get("prompt"),
            tool=tool,
            arguments=arguments.get("arguments"),
            shell=arguments.get("shell"),
            deliver=list(arguments.get("deliver") or ["log"]),
            missed=str(arguments.get("missed") or "skip"),
            origin="agent",
            created_at=self.scheduler.clock.now(),
        )

    def _check_tool(self, name: str, arguments: dict[str, Any]) -> None:
        check_tool_job(self.agent, name, arguments)


def check_tool_job(agent: Agent, name: str, arguments: Mapping[str, Any]) -> None:
    """Refuse a tool job the agent could never run: an unknown tool, a cron or shell tool, or
    arguments that fail the tool's schema (checked when the job is made, not at 3 a.m.).

    Raises:
        ValueError: Naming the tool or the argument and what to write.
    """
    if name.startswith("cron_"):
        raise ValueError("tool: a job cannot schedule other jobs")
    if name == "shell":
        raise ValueError('tool: to schedule a command, use shell = "..." instead')
    tool = agent.registry.get(name)
    if tool is None:
        raise ValueError(
            f"tool: no tool is named {name[:64]!r}; available: {', '.join(agent.registry.names())}"
        )
    problem = agent.schema_validator.problem(tool, ToolCall(name, dict(arguments)))
    if problem is not None:
        raise ValueError(f"arguments: {problem}")


class CronList(_CronTool):
    """List the scheduled jobs with their schedules and next runs."""

    name = "cron_list"
    description = (
        "List the scheduled jobs: name, what each does, when, its next run and last result."
    )
    risk = RiskClass.READ

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        scheduler = self.scheduler
        jobs = await scheduler.store.list()
        if not jobs:
            return ToolResult.ok("No jobs are scheduled.", data=[])
        lines, data = [], []
        for job in jobs:
            last = await scheduler.store.runs(job.name, limit=1)
            status = f"last: {last[0].status}" if last else "never ran"
            nxt = format_local(job.next_run, scheduler.zone) if job.next_run else "none"
            state = "" if job.enabled else " (disabled)"
            when = job.schedule.describe(scheduler.zone)
            lines.append(f"- {job.name}{state}: {job.summary()}; {when}; next {nxt}; {status}")
            data.append(
                {
                    "name": job.name,
                    "schedule": when,
                    "next_run": job.next_run,
                    "enabled": job.enabled,
                    "origin": job.origin,
                }
            )
        return ToolResult.ok("\n".join(lines), data=data)


class CronRemove(_CronTool):
    """Remove a scheduled job by name."""

    name = "cron_remove"
    description = "Remove a scheduled job by its name (see cron_list)."
    risk = RiskClass.ACT
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {"name": {"type": "string", "maxLength": 64}},
        "required": ["name"],
        "additionalProperties": False,
    }

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        name = str(arguments["name"])
        job = await self.scheduler.store.get(name)
        if job is None:
            return ToolResult.fail(f"no job is named {name[:64]!r}; see cron_list")
        if job.origin == "config":
            return ToolResult.fail(
                f"job {name!r} is declared in the config file ([[jobs]]); it comes back at the "
                "next start, so the user removes it there"
            )
        await self.scheduler.store.remove(name)
        await self.scheduler.jobs_changed()
        return ToolResult.ok(f"Removed job {name!r}.")

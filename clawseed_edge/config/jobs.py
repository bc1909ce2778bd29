"""``[scheduler]`` and ``[[jobs]]``: the scheduler's settings and the jobs the file declares.

A job has one schedule (``cron``, ``every`` or ``at``) and one action (``prompt``, ``tool`` with
``arguments``, or ``shell``); the loader refuses a job with none or two of either, naming the
key. The cron expression is checked here with the same library the scheduler runs it with
(cronsim, imported only when a file declares a cron job), so ``config check`` catches it.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Annotated, Any, Literal

import msgspec

__all__ = [
    "JOB_NAME",
    "MAX_INTERVAL_S",
    "JobSettings",
    "SchedulerSettings",
    "check_cron",
    "check_timezone",
    "parse_at",
    "parse_duration",
]

#: A job's name: what `cron remove NAME` and the cron tools use.
JOB_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
#: The longest interval (a year); the shortest is one second.
MAX_INTERVAL_S = 366 * 86400
#: Bounds on what a job carries (a model creates jobs too).
MAX_PROMPT_CHARS = 4000
MAX_SHELL_CHARS = 1000
MAX_ARGUMENTS_CHARS = 4096

_DURATION = re.compile(r"(\d+)\s*(d|h|m|s)")
_UNITS = {"d": 86400, "h": 3600, "m": 60, "s": 1}

Deliver = Literal["log", "memory", "phones"]


def parse_duration(value: str | int) -> int:
    """Seconds of an interval: an integer of seconds, or ``"90s"``, ``"10m"``, ``"1h30m"``, ``"2d"``.

    Raises:
        ValueError: Not a duration, or outside 1 s .. 366 days (the message says what to write).
    """
    if isinstance(value, bool):
        raise ValueError("every: write seconds (60) or a duration such as '10m' or '1h30m'")
    if isinstance(value, int):
        seconds = value
    else:
        text = value.strip().lower().replace(" ", "")
        if text.isdigit():
            text += "s"  # "60": seconds
        parts = _DURATION.findall(text)
        if not text or "".join(n + u for n, u in parts) != text:
            raise ValueError(
                f"every: {value[:40]!r} is not a duration; write seconds (60) or a duration "
                "such as '45s', '10m', '1h30m', '2d'"
            )
        seconds = sum(int(n) * _UNITS[u] for n, u in parts)
    if not 1 <= seconds <= MAX_INTERVAL_S:
        raise ValueError(f"every: {seconds} s is outside 1 s .. 366 days")
    return seconds


def check_cron(expr: str) -> str:
    """The expression, stripped, if cronsim accepts it (five fields: minute hour day month weekday).

    Raises:
        ValueError: ``cron: <what is wrong>; ...`` naming the expression.
    """
    from cronsim import CronSim, CronSimError

    text = " ".join(expr.split())
    if len(text) > 200:
        raise ValueError("cron: the expression is longer than 200 characters")
    try:
        CronSim(text, datetime(2026, 1, 1))
    except CronSimError as exc:
        raise ValueError(
            f"cron: {text!r} is not a cron expression ({exc}); write five fields, minute hour "
            "day-of-month month day-of-week, e.g. '0 7 * * *' for every day at 07:00"
        ) from exc
    return text


def parse_at(value: str) -> datetime:
    """A one-off time: ISO 8601 local time (``2026-12-24T18:00``) or with an offset.

    Raises:
        ValueError: Not an ISO date and time.
    """
    try:
        when = datetime.fromisoformat(value.strip())
    except ValueError as exc:
        raise ValueError(
            f"at: {value[:40]!r} is not a date and time; write ISO 8601 such as "
            "'2026-12-24T18:00' (the device's time zone) or '2026-12-24T18:00+01:00'"
        ) from exc
    return when


def check_timezone(name: str) -> str:
    """``name`` if the system's time zone database knows it ("" means the system's own zone).

    Raises:
        ValueError: ``timezone: ...`` naming the zone.
    """
    if not name:
        return name
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError(
            f"timezone: {name[:60]!r} is not a known time zone; write an IANA name such as "
            "'Europe/Berlin' or 'America/New_York' (install the system's tzdata package if "
            "none is known), or leave it out for the system's zone"
        ) from exc
    return name


class SchedulerSettings(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """``[scheduler]``: jobs run by ``clawseed-edge run`` (docs/scheduler.md).

    Attributes:
        enabled: Run scheduled jobs in the service.
        timezone: The IANA zone cron and one-off times are read in; empty: the system's zone.
        max_concurrent_runs: Jobs running at the same time (a job never overlaps itself).
        keep_runs: Run-history rows kept per job (older ones are deleted).
        max_jobs: The most jobs state.db may hold (the model creates jobs too).
    """

    enabled: bool = True
    timezone: str = ""
    max_concurrent_runs: Annotated[int, msgspec.Meta(ge=1, le=16)] = 2
    keep_runs: Annotated[int, msgspec.Meta(ge=1, le=10000)] = 100
    max_jobs: Annotated[int, msgspec.Meta(ge=1, le=1000)] = 50

    def __post_init__(self) -> None:
        check_timezone(self.timezone)


class JobSettings(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """``[[jobs]]``: a job declared in the file (synced into state.db when the service starts).

    Attributes:
        name: Unique; letters, digits, ``_`` and ``-`` (at most 64).
        cron: A five-field cron expression in the scheduler's time zone.
        every: An interval: seconds, or ``"10m"``, ``"1h30m"``.
        at: A one-off time, ISO 8601 (``2026-12-24T18:00``).
        prompt: Ask the agent this (a turn in the job's own session).
        tool: Call this tool directly (no model), with ``arguments``.
        arguments: The tool call's arguments.
        shell: Run this command with the shell tool (``[tools] shell`` and the allowlist apply).
        deliver: Where the answer or result goes: ``log``, ``memory``, ``phones``.
        missed: After downtime: ``skip`` the missed run, or ``run_once`` when the service starts.
        enabled: A disabled job is kept but not run.
    """

    name: str
    cron: str | None = None
    every: str | int | None = None
    at: str | None = None
    prompt: str | None = None
    tool: str | None = None
    arguments: dict[str, Any] = msgspec.field(default_factory=dict)
    shell: str | None = None
    deliver: list[Deliver] = msgspec.field(default_factory=lambda: ["log"])
    missed: Literal["skip", "run_once"] = "skip"
    enabled: bool = True

    def __post_init__(self) -> None:
        if not JOB_NAME.match(self.name):
            raise ValueError(
                f"name: {self.name[:70]!r} is not a job name; use letters, digits, '_' and '-' "
                "(at most 64, starting with a letter or digit)"
            )
        schedules = [k for k in ("cron", "every", "at") if getattr(self, k) is not None]
        if len(schedules) != 1:
            raise ValueError(
                f"cron: job {self.name!r} needs exactly one schedule (cron, every or at), "
                f"got {', '.join(schedules) or 'none'}"
            )
        if self.cron is not None:
            self.cron = check_cron(self.cron)
        if self.every is not None:
            parse_duration(self.every)
        if self.at is not None:
            parse_at(self.at)
        actions = [k for k in ("prompt", "tool", "shell") if getattr(self, k) is not None]
        if len(actions) != 1:
            raise ValueError(
                f"prompt: job {self.name!r} needs exactly one action (prompt, tool or shell), "
                f"got {', '.join(actions) or 'none'}"
            )
        if self.prompt is not None and not 0 < len(self.prompt) <= MAX_PROMPT_CHARS:
            raise ValueError(f"prompt: must be 1..{MAX_PROMPT_CHARS} characters")
        if self.shell is not None and not 0 < len(self.shell.strip()) <= MAX_SHELL_CHARS:
            raise ValueError(f"shell: must be a command of 1..{MAX_SHELL_CHARS} characters")
        if self.arguments and self.tool is None:
            raise ValueError('arguments: only a tool job takes arguments; add tool = "..."')
        if len(json.dumps(self.arguments)) > MAX_ARGUMENTS_CHARS:
            raise ValueError(f"arguments: more than {MAX_ARGUMENTS_CHARS} characters as JSON")
        if not self.deliver:
            raise ValueError("deliver: name at least one place: 'log', 'memory' or 'phones'")

"""When a job runs: cron expressions, fixed intervals and one-off times, in a time zone.

Times are Unix seconds (floats) everywhere outside this module; wall-clock times exist only to
read a cron expression or a one-off time in the device's zone.

Daylight saving time (docs/scheduler.md), in a zone such as Europe/Berlin:

- **Cron, spring forward** (02:00 -> 03:00): a job whose time falls in the skipped hour (02:30)
  runs once, at the first instant after the gap (03:00 local). Never zero times.
- **Cron, fall back** (03:00 -> 02:00): a job at a fixed time in the repeated hour (02:30) runs
  once, at its first occurrence. A job whose hour is ``*`` (every 30 minutes) follows real time
  and runs in both passes of the hour, as elapsed time says it should.
- **Intervals** (``every``) count elapsed seconds from the job's creation: DST does not move them.
- **One-off times** (``at``) read as local wall time: a time in a skipped hour runs at the
  first instant after the gap; a time in a repeated hour runs at its first occurrence.

The cron rules are cronsim's (the same as Debian's cron); this module only checks each next
time is strictly later than the previous one, so no instant can run twice.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo
from typing import Any, Literal

from clawseed_edge.config.jobs import check_cron, parse_at, parse_duration

__all__ = ["Schedule", "ZoneSource", "local_zone", "zone_named"]

ScheduleKind = Literal["cron", "every", "at"]


def local_zone() -> tzinfo:
    """The system's time zone with its DST rules: ``$TZ``, else ``/etc/localtime``, else UTC."""
    from zoneinfo import ZoneInfo  # with sysconfig: 0.3 MB, only once a zone is needed

    name = os.environ.get("TZ", "").lstrip(":")
    if name:
        try:
            return ZoneInfo(name)
        except (ValueError, OSError, KeyError):
            pass
    # /etc/localtime is usually a link into the zone database: its name reads better in
    # "At 07:00 every day (Europe/Berlin)" than the file's contents under the key "localtime".
    target = os.path.realpath("/etc/localtime")
    if "/zoneinfo/" in target:
        try:
            return ZoneInfo(target.split("/zoneinfo/", 1)[1])
        except (ValueError, OSError, KeyError):
            pass
    try:
        with open("/etc/localtime", "rb") as f:
            return ZoneInfo.from_file(f, key="localtime")
    except (OSError, ValueError):
        return ZoneInfo("UTC")


def zone_named(name: str) -> tzinfo:
    """``ZoneInfo(name)``, or the system's zone for ``""`` (the name was checked at load)."""
    if not name:
        return local_zone()
    from zoneinfo import ZoneInfo

    return ZoneInfo(name)


class ZoneSource:
    """A time zone resolved at first use: an idle service with no job never loads zoneinfo.

    Holds a ready ``tzinfo`` (tests, callers that have one) or the ``[scheduler] timezone``
    name to resolve with :func:`zone_named`.
    """

    __slots__ = ("_name", "_zone")

    def __init__(self, zone: tzinfo | str) -> None:
        self._zone: tzinfo | None = None if isinstance(zone, str) else zone
        self._name = zone if isinstance(zone, str) else ""

    def get(self) -> tzinfo:
        """The zone (resolved once)."""
        if self._zone is None:
            self._zone = zone_named(self._name)
        return self._zone


def _exists(wall: datetime, zone: tzinfo) -> bool:
    """Whether the naive wall time exists in ``zone`` (not inside a spring-forward gap)."""
    aware = wall.replace(tzinfo=zone)
    back = datetime.fromtimestamp(aware.timestamp(), zone).replace(tzinfo=None)
    return back == wall


def wall_to_instant(wall: datetime, zone: tzinfo) -> float:
    """Unix seconds of a local wall time: a repeated time's first occurrence; a skipped time
    moves to the first instant after the gap (minute by minute, at most a day)."""
    probe = wall.replace(second=0, microsecond=0)
    extra = wall - probe
    for _ in range(24 * 60):
        if _exists(probe, zone):
            if probe != wall.replace(second=0, microsecond=0):
                extra = timedelta(0)  # moved past a gap: the gap's end, not a second later
            return (probe.replace(tzinfo=zone, fold=0) + extra).timestamp()
        probe += timedelta(minutes=1)
    return wall.replace(tzinfo=zone).timestamp()  # a zone with a day-long gap: as zoneinfo says


@dataclass(frozen=True, slots=True)
class Schedule:
    """One schedule: ``cron`` (an expression), ``every`` (seconds) or ``at`` (an ISO time).

    Build with :meth:`parse` (checks the value; raises ValueError naming what to write).
    """

    kind: ScheduleKind
    value: str

    @classmethod
    def parse(cls, kind: str, value: str | int) -> Schedule:
        """A checked schedule. Raises ValueError (``cron: ...``, ``every: ...``, ``at: ...``)."""
        if kind == "cron":
            return cls("cron", check_cron(str(value)))
        if kind == "every":
            return cls("every", str(parse_duration(value)))
        if kind == "at":
            return cls("at", parse_at(str(value)).isoformat(timespec="minutes"))
        raise ValueError(f"schedule: unknown kind {kind!r}; use cron, every or at")

    @classmethod
    def from_json(cls, text: str) -> Schedule:
        data = json.loads(text)
        return cls.parse(data["kind"], data["value"])

    def to_json(self) -> str:
        return json.dumps({"kind": self.kind, "value": self.value})

    @property
    def seconds(self) -> int:
        """The interval of an ``every`` schedule."""
        return int(self.value)

    def next_after(self, after: float, zone: tzinfo, anchor: float) -> float | None:
        """The first run strictly after ``after`` (Unix seconds), or None (a one-off that passed).

        Args:
            after: Unix seconds.
            zone: The zone cron and one-off times are read in.
            anchor: When an ``every`` job was created; its runs are ``anchor + k * interval``.
        """
        if self.kind == "every":
            step = self.seconds
            k = max(0, int((after - anchor) // step) + 1)
            at = anchor + k * step
            while at <= after:  # float rounding
                at += step
            return at
        if self.kind == "at":
            at = self.once_at(zone)
            return at if at > after else None
        from cronsim import CronSim  # a few ms to import; only a cron job needs it

        start = datetime.fromtimestamp(after, zone)
        for candidate in CronSim(self.value, start):
            stamp = candidate.timestamp()
            if stamp > after:
                return stamp
        return None  # pragma: no cover - cronsim's iterator is endless for a valid expression

    def first_run(self, now: float, zone: tzinfo, anchor: float) -> float | None:
        """A new job's first run: a one-off's time (even if it has passed: it is then due),
        else the first run after ``now``."""
        if self.kind == "at":
            return self.once_at(zone)
        return self.next_after(now, zone, anchor)

    def once_at(self, zone: tzinfo) -> float:
        """Unix seconds of an ``at`` schedule (a time with an offset is taken as written)."""
        when = datetime.fromisoformat(self.value)
        if when.tzinfo is not None:
            return when.timestamp()
        return wall_to_instant(when, zone)

    def upcoming(self, after: float, zone: tzinfo, anchor: float, count: int = 3) -> list[float]:
        """The next ``count`` runs strictly after ``after`` (fewer for a one-off)."""
        out: list[float] = []
        at: float | None = after
        while len(out) < count and at is not None:
            at = self.next_after(at, zone, anchor)
            if at is not None:
                out.append(at)
        return out

    def describe(self, zone: tzinfo) -> str:
        """The schedule in plain words: ``At 00:00 every day (Europe/Berlin)``."""
        zone_name = str(getattr(zone, "key", None) or zone)
        if self.kind == "every":
            return f"every {_plain_duration(self.seconds)}"
        if self.kind == "at":
            when = datetime.fromisoformat(self.value)
            return f"once at {when.strftime('%Y-%m-%d %H:%M')} ({zone_name})"
        from cronsim import CronSim

        try:
            words = CronSim(self.value, datetime.now(zone)).explain()
        except Exception:  # explain() is best effort; the expression is still valid
            words = f"cron {self.value!r}"
        return f"{words} ({zone_name})"


def _plain_duration(seconds: int) -> str:
    parts = []
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60), ("second", 1)):
        n, seconds = divmod(seconds, size)
        if n:
            parts.append(f"{n} {unit}" if n == 1 else f"{n} {unit}s")
    text = " ".join(parts)
    return text[2:] if text.startswith("1 ") and len(parts) == 1 else text


def format_local(stamp: float, zone: tzinfo) -> str:
    """``Tue 2026-12-01 00:00 CET``: a run time as the user reads it."""
    return datetime.fromtimestamp(stamp, zone).strftime("%a %Y-%m-%d %H:%M %Z")


def describe_runs(schedule: Schedule, zone: tzinfo, now: float, anchor: float) -> dict[str, Any]:
    """The schedule in words and its next three runs, as the cron tools and CLI show them."""
    runs = schedule.upcoming(now, zone, anchor, 3)
    return {
        "schedule": schedule.describe(zone),
        "next_runs": [format_local(t, zone) for t in runs],
    }

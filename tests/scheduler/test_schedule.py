"""Next-run computation across DST changes in a real zone (Europe/Berlin), intervals, one-offs.

In 2026 Berlin springs forward on 29 March (02:00 CET -> 03:00 CEST) and falls back on
25 October (03:00 CEST -> 02:00 CET).
"""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from clawseed_edge.scheduler import Schedule

BERLIN = ZoneInfo("Europe/Berlin")


def local(*args: int, fold: int = 0) -> float:
    return datetime(*args, tzinfo=BERLIN, fold=fold).timestamp()  # type: ignore[misc]


def runs_between(schedule: Schedule, start: float, end: float, anchor: float = 0.0) -> list[str]:
    out, at = [], start
    while True:
        nxt = schedule.next_after(at, BERLIN, anchor)
        if nxt is None or nxt >= end:
            return out
        out.append(datetime.fromtimestamp(nxt, BERLIN).strftime("%d %H:%M %z"))
        at = nxt


def test_a_job_in_the_skipped_hour_runs_once_at_the_end_of_the_gap() -> None:
    runs = runs_between(
        Schedule.parse("cron", "30 2 * * *"), local(2026, 3, 28, 12), local(2026, 3, 30, 12)
    )
    assert runs == ["29 03:00 +0200", "30 02:30 +0200"]


def test_a_fixed_time_in_the_repeated_hour_runs_once() -> None:
    runs = runs_between(
        Schedule.parse("cron", "30 2 * * *"), local(2026, 10, 24, 12), local(2026, 10, 26, 12)
    )
    assert runs == ["25 02:30 +0200", "26 02:30 +0100"]


def test_an_hourly_job_follows_real_time_through_both_changes() -> None:
    hourly = Schedule.parse("cron", "0 * * * *")
    spring = runs_between(hourly, local(2026, 3, 29, 0, 30), local(2026, 3, 29, 4, 30))
    assert spring == ["29 01:00 +0100", "29 03:00 +0200", "29 04:00 +0200"]
    fall = runs_between(hourly, local(2026, 10, 25, 0, 30), local(2026, 10, 25, 3, 30))
    # 02:00 happens twice; an hourly job runs every real hour, both times.
    assert fall == ["25 01:00 +0200", "25 02:00 +0200", "25 02:00 +0100", "25 03:00 +0100"]


def test_a_daily_job_keeps_its_wall_time_across_the_change() -> None:
    seven = Schedule.parse("cron", "0 7 * * *")
    runs = runs_between(seven, local(2026, 3, 28, 8), local(2026, 3, 31, 8))
    assert runs == ["29 07:00 +0200", "30 07:00 +0200", "31 07:00 +0200"]
    gap = seven.next_after(local(2026, 3, 29, 7), BERLIN, 0) or 0
    assert gap - local(2026, 3, 29, 7) == 86400  # a real day, though the day before had 23 h


def test_an_interval_counts_elapsed_seconds_whatever_the_clock_says() -> None:
    every = Schedule.parse("every", "1h")
    anchor = local(2026, 10, 25, 0, 0)
    runs = runs_between(every, anchor, anchor + 4 * 3600 + 1, anchor)
    # Four elapsed hours, four runs, though the wall clock moved only three hours.
    assert runs == ["25 01:00 +0200", "25 02:00 +0200", "25 02:00 +0100", "25 03:00 +0100"]


def test_a_one_off_in_the_gap_runs_at_the_gap_end_and_in_the_fold_at_the_first_pass() -> None:
    gap = Schedule.parse("at", "2026-03-29T02:30")
    assert gap.once_at(BERLIN) == local(2026, 3, 29, 3, 0)
    fold = Schedule.parse("at", "2026-10-25T02:30")
    assert fold.once_at(BERLIN) == local(2026, 10, 25, 2, 30, fold=0)
    assert fold.next_after(fold.once_at(BERLIN), BERLIN, 0) is None  # once only


def test_upcoming_and_plain_words() -> None:
    midnight = Schedule.parse("cron", "0 0 * * *")
    now = local(2026, 12, 1, 12)
    assert midnight.upcoming(now, BERLIN, 0) == [local(2026, 12, d) for d in (2, 3, 4)]
    assert midnight.describe(BERLIN) == "At 00:00 every day (Europe/Berlin)"
    assert Schedule.parse("every", "90m").describe(BERLIN) == "every 1 hour 30 minutes"
    assert Schedule.parse("every", 60).describe(BERLIN) == "every minute"


@pytest.mark.parametrize(
    ("kind", "value", "message"),
    [
        ("cron", "61 * * * *", "is not a cron expression \\(Bad minute\\)"),
        ("cron", "0 7 * *", "write five fields"),
        ("every", "0s", "outside 1 s"),
        ("every", "ten minutes", "is not a duration"),
        ("at", "tomorrow", "is not a date and time"),
        ("weekly", "x", "unknown kind"),
    ],
)
def test_a_bad_schedule_says_what_to_write(kind: str, value: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Schedule.parse(kind, value)


def test_a_zone_source_resolves_a_name_once_and_keeps_a_given_zone() -> None:
    from datetime import UTC

    from clawseed_edge.scheduler.schedule import ZoneSource, local_zone

    named = ZoneSource("Europe/Berlin")
    assert str(named.get()) == "Europe/Berlin" and named.get() is named.get()
    assert str(ZoneSource("").get()) == str(local_zone())
    assert ZoneSource(UTC).get() is UTC

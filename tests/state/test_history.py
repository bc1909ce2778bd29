"""SensorHistory with a fake clock over days: batching, aggregation, retention, a DST night."""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from clawseed_edge.api import ResourceClosed
from clawseed_edge.state import HistoryPoint, HistoryRetention, SensorHistory

DAY = 86400.0
T0 = 1_790_000_000.0 - (1_790_000_000.0 % 3600)  # an hour boundary, UTC


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def point(t: float, v: float, q: str = "temperature") -> HistoryPoint:
    return HistoryPoint("greenhouse", q, "°C", t, v)


async def three_hours(history: SensorHistory) -> None:
    """One value a minute for three hours: 10 + minute/60, with a cold dip and a hot spike."""
    for i in range(180):
        v = 10 + i / 60
        if i == 30:
            v = -2.0
        if i == 150:
            v = 40.0
        history.record(point(T0 + i * 60 + 5, v))
    assert await history.flush() == 180


async def test_records_are_batched_until_flush(tmp_path: Path) -> None:
    clock = Clock(T0)
    async with await SensorHistory.open(tmp_path / "h.db", clock=clock) as history:
        history.record(point(T0, 1.0))
        history.record(point(T0 + 1, math.nan))  # unknown: not stored
        assert history.pending == 1
        summary = await history.summary("greenhouse", "temperature", T0 - 10, T0 + 10)
        assert summary is None  # nothing written yet
        await history.flush()
        summary = await history.summary("greenhouse", "temperature", T0 - 10, T0 + 10)
        assert summary is not None and summary.count == 1
    # closing writes what is pending
    async with await SensorHistory.open(tmp_path / "h.db", clock=clock) as history:
        history.record(point(T0 + 2, 3.0))
    async with await SensorHistory.open(tmp_path / "h.db", clock=clock) as history:
        summary = await history.summary("greenhouse", "temperature", T0 - 10, T0 + 10)
        assert summary is not None and summary.count == 2 and summary.last == 3.0
    assert (tmp_path / "h.db").stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize(
    ("later", "points", "resolution", "drawn"),
    [
        (3 * 3600, 360, "raw", 180),  # fine points over a recent window: the raw table
        (3 * 3600, 60, "1m", 60),  # a point spans 3 minutes: minute rows are enough
        (3 * 3600, 3, "1h", 3),  # a point spans an hour: hour rows are enough
        (3 * DAY, 360, "1m", 180),  # raw points pruned
        (40 * DAY, 360, "1h", 3),  # minute rows pruned too
    ],
)
async def test_each_resolution_gives_the_same_extremes_mean_and_last(
    tmp_path: Path, later: float, points: int, resolution: str, drawn: int
) -> None:
    clock = Clock(T0)
    async with await SensorHistory.open(tmp_path / "h.db", clock=clock) as history:
        await three_hours(history)
        clock.now = T0 + later
        await history.prune()
        s = await history.summary("greenhouse", "temperature", T0, T0 + 3 * 3600, points=points)
    assert s is not None and s.resolution == resolution
    assert s.count == 180
    assert (s.min, s.min_time) == (-2.0, T0 + 30 * 60 + 5)
    assert (s.max, s.max_time) == (40.0, T0 + 150 * 60 + 5)
    expected = sum(10 + i / 60 for i in range(180)) - (10 + 0.5) - (10 + 2.5) - 2 + 40
    assert s.mean == pytest.approx(expected / 180)
    assert (s.last, s.last_time) == (pytest.approx(10 + 179 / 60), T0 + 179 * 60 + 5)
    assert len(s.points) == drawn


async def test_retention_prunes_each_resolution_in_turn(tmp_path: Path) -> None:
    clock = Clock(T0)
    retention = HistoryRetention(raw_s=2 * DAY, minutes_s=30 * DAY, hours_s=366 * DAY)
    async with await SensorHistory.open(tmp_path / "h.db", retention=retention, clock=clock) as h:
        await three_hours(h)

        async def counts() -> list[int]:
            return [
                (await h._fetch(f"SELECT count(*) FROM {t}"))[0][0]
                for t in ("points", "minutes", "hours")
            ]

        assert await counts() == [180, 180, 3]
        clock.now = T0 + 2 * DAY + 3 * 3600 + 1
        assert await h.prune() == 180
        assert await counts() == [0, 180, 3]
        clock.now = T0 + 31 * DAY
        await h.prune()
        assert await counts() == [0, 0, 3]
        clock.now = T0 + 367 * DAY
        await h.prune()
        assert await counts() == [0, 0, 0]


async def test_a_year_of_batches_merges_buckets_across_flushes(tmp_path: Path) -> None:
    clock = Clock(T0)
    async with await SensorHistory.open(tmp_path / "h.db", clock=clock) as h:
        # two flushes inside one hour bucket merge into one row
        h.record(point(T0 + 10, 5.0))
        await h.flush()
        h.record(point(T0 + 70, 1.0))
        h.record(point(T0 + 80, 9.0))
        await h.flush()
        rows = await h._fetch("SELECT lo, hi, sum, n, t_lo, t_hi, last FROM hours")
        assert rows == [(1.0, 9.0, 15.0, 3, T0 + 70, T0 + 80, 9.0)]


async def test_a_dst_night_has_no_double_hour(tmp_path: Path) -> None:
    berlin = ZoneInfo("Europe/Berlin")
    # 2026-10-25 03:00 CEST -> 02:00 CET: the local hour 02:00-03:00 happens twice.
    start = dt.datetime(2026, 10, 24, 22, 0, tzinfo=berlin).timestamp()
    end = dt.datetime(2026, 10, 25, 7, 0, tzinfo=berlin).timestamp()
    assert end - start == 10 * 3600  # nine local hours, ten real ones
    clock = Clock(start)
    async with await SensorHistory.open(tmp_path / "h.db", clock=clock) as h:
        t = start
        while t < end:
            h.record(point(t, 5.0 + (t - start) / 3600))
            t += 600
        await h.flush()
        clock.now = start + 40 * DAY
        s = await h.summary("greenhouse", "temperature", start, end, now=clock.now)
        assert s is not None and s.resolution == "1h"
        assert s.count == 60
        rows = await h._fetch("SELECT n FROM hours ORDER BY t")
        assert rows == [(6,)] * 10  # ten hour buckets of six, none of twelve


async def test_unknown_series_and_empty_window(tmp_path: Path) -> None:
    async with await SensorHistory.open(tmp_path / "h.db", clock=Clock(T0)) as h:
        await three_hours(h)
        assert await h.summary("nope", "temperature", T0, T0 + 60) is None
        s = await h.summary("greenhouse", "temperature", T0 - 7200, T0 - 3600)
        assert s is not None and s.count == 0 and s.min is None
        assert await h.series() == [("greenhouse", "temperature", "°C")]


async def test_closed_history_refuses(tmp_path: Path) -> None:
    h = await SensorHistory.open(tmp_path / "h.db")
    await h.aclose()
    await h.aclose()
    with pytest.raises(ResourceClosed, match="closed"):
        await h.summary("greenhouse", "temperature", 0, 1)


async def test_a_failed_flush_is_rolled_back_whole_and_its_batch_written_next_time(
    tmp_path: Path,
) -> None:
    import sqlite3

    clock = Clock(T0 + 200)
    async with await SensorHistory.open(tmp_path / "h.db", clock=clock) as history:
        # The store refuses the batch halfway (after the points, before the aggregates) ...
        with sqlite3.connect(tmp_path / "h.db") as other:
            other.execute(
                "CREATE TRIGGER refuse BEFORE INSERT ON minutes "
                "BEGIN SELECT RAISE(ABORT, 'disk says no'); END"
            )
        history.record(point(T0 + 5, 1.0))
        history.record(point(T0 + 65, 2.0))
        with pytest.raises(sqlite3.IntegrityError, match="disk says no"):
            await history.flush()
        assert history.pending == 2  # ... so nothing of it was kept, and it waits
        assert await history.summary("greenhouse", "temperature", T0, T0 + 120) is None
        with sqlite3.connect(tmp_path / "h.db") as other:
            other.execute("DROP TRIGGER refuse")
        assert await history.flush() == 2
        s = await history.summary("greenhouse", "temperature", T0, T0 + 120)
        assert s is not None and (s.count, s.min, s.max) == (2, 1.0, 2.0)  # once, not twice

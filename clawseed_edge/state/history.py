"""``SensorHistory``: filtered sensor values in SQLite, as raw points, then minute and hour aggregates.

Its own file, ``$CLAWSEED_HOME/history.db`` (WAL: the CLI reads while the service writes), kept
apart from ``state.db`` so a year of readings never slows a pairing or a job. Three tables per
(sensor, quantity) series:

- ``points``: every value, kept ``raw_s`` (48 h by default);
- ``minutes`` / ``hours``: min, max, sum and count per UTC minute / hour, kept ``minutes_s``
  (30 days) and ``hours_s`` (a year). Buckets are UTC, so a DST night has no double hour.

Writes are batched: :meth:`SensorHistory.record` only appends to memory; :meth:`flush` writes a
batch in one transaction (raw rows, and aggregates merged per bucket with an upsert), and the
service's background task flushes every few seconds and prunes every hour. aiosqlite runs the
connection on its own thread, never on the loop.

Why the minute table is kept 30 days and not a year: at 60 s sampling a minute row holds one
value, so a year of them costs what a year of raw points does (benchmarks/bench_history.py
measures both; docs/sensors.md states the sizes).
"""

from __future__ import annotations

import asyncio
import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from clawseed_edge.api import Lifecycle, ResourceClosed

from .db import StateError

__all__ = [
    "HistoryPoint",
    "HistoryRetention",
    "HistorySummary",
    "SensorHistory",
]

#: Values held in memory before a flush is forced (a flush that keeps failing drops the oldest).
MAX_PENDING = 20_000
#: Points a summary carries at most (what a tool, the CLI and the gateway return).
MAX_POINTS = 2000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS series (
    id INTEGER PRIMARY KEY,
    sensor TEXT NOT NULL,
    quantity TEXT NOT NULL,
    unit TEXT NOT NULL,
    UNIQUE (sensor, quantity)
);
CREATE TABLE IF NOT EXISTS points (
    series INTEGER NOT NULL, t REAL NOT NULL, v REAL NOT NULL, PRIMARY KEY (series, t)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS minutes (
    series INTEGER NOT NULL, t INTEGER NOT NULL,
    lo REAL NOT NULL, hi REAL NOT NULL, sum REAL NOT NULL, n INTEGER NOT NULL,
    t_lo REAL NOT NULL, t_hi REAL NOT NULL, last REAL NOT NULL, t_last REAL NOT NULL,
    PRIMARY KEY (series, t)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS hours (
    series INTEGER NOT NULL, t INTEGER NOT NULL,
    lo REAL NOT NULL, hi REAL NOT NULL, sum REAL NOT NULL, n INTEGER NOT NULL,
    t_lo REAL NOT NULL, t_hi REAL NOT NULL, last REAL NOT NULL, t_last REAL NOT NULL,
    PRIMARY KEY (series, t)
) WITHOUT ROWID;
"""

# Merge a batch's bucket into the stored one: extremes with their times, sums, the latest.
_UPSERT = """
INSERT INTO {table} (series, t, lo, hi, sum, n, t_lo, t_hi, last, t_last)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (series, t) DO UPDATE SET
    t_lo = CASE WHEN excluded.lo < lo THEN excluded.t_lo ELSE t_lo END,
    lo = min(lo, excluded.lo),
    t_hi = CASE WHEN excluded.hi > hi THEN excluded.t_hi ELSE t_hi END,
    hi = max(hi, excluded.hi),
    sum = sum + excluded.sum,
    n = n + excluded.n,
    last = CASE WHEN excluded.t_last >= t_last THEN excluded.last ELSE last END,
    t_last = max(t_last, excluded.t_last)
"""


class HistoryRetention(msgspec.Struct, frozen=True):
    """How long each resolution is kept, in seconds (``[history]`` in the config)."""

    raw_s: float = 48 * 3600.0
    minutes_s: float = 30 * 86400.0
    hours_s: float = 366 * 86400.0


class HistoryPoint(msgspec.Struct, frozen=True):
    """One filtered value: ``value`` of ``quantity`` (in ``unit``) of ``sensor`` at Unix ``time``."""

    sensor: str
    quantity: str
    unit: str
    time: float
    value: float


@dataclass(slots=True)
class HistorySummary:
    """What a window held: extremes with their times, the mean, the last value, a few points.

    ``resolution`` says where it came from: ``raw`` (each value), ``1m`` or ``1h`` (aggregates:
    an extreme's time is within its bucket). ``count`` is 0 when the window held nothing.
    """

    sensor: str
    quantity: str
    unit: str
    start: float
    end: float
    resolution: str
    count: int = 0
    min: float | None = None
    min_time: float | None = None
    max: float | None = None
    max_time: float | None = None
    mean: float | None = None
    last: float | None = None
    last_time: float | None = None
    points: list[tuple[float, float]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in self.__slots__ if k != "points"}
        out["points"] = [[t, v] for t, v in self.points]
        return out


class SensorHistory:
    """The history database; create with :meth:`open`, close with :meth:`aclose` (idempotent).

    Args (of :meth:`open`):
        path: The file (created mode 0600).
        retention: How long each resolution is kept.
        clock: Unix seconds (tests pass a fake one).

    A closed history refuses work with :class:`~clawseed_edge.api.ResourceClosed`.
    """

    def __init__(
        self, conn: Any, path: Path, retention: HistoryRetention, clock: Callable[[], float]
    ) -> None:
        self._conn = conn
        self.path = path
        self.retention = retention
        self._clock = clock
        self._pending: list[HistoryPoint] = []
        self._series: dict[tuple[str, str], int] = {}
        # One transaction at a time on the shared connection.
        self._lock = asyncio.Lock()
        self.state = Lifecycle.OPEN

    @classmethod
    async def open(
        cls,
        path: str | os.PathLike[str],
        *,
        retention: HistoryRetention | None = None,
        clock: Callable[[], float] = time.time,
    ) -> SensorHistory:
        """Open (creating) the file. Cancel-safe.

        Raises:
            StateError: The file cannot be opened (the message names it and what to do).
        """
        import aiosqlite

        from .db import _create_private

        file = Path(path)
        _create_private(file)
        try:
            conn = await aiosqlite.connect(file)
        except Exception as exc:
            raise StateError(
                f"cannot open {file}: {exc}; check the directory's permissions"
            ) from exc
        history = cls(conn, file, retention or HistoryRetention(), clock)
        try:
            await conn.execute("PRAGMA journal_mode=WAL")
            # WAL + NORMAL: never corrupt; a power cut loses at most the last batches, and an
            # SD card is not synced at every flush.
            await conn.execute("PRAGMA synchronous=NORMAL")
            await conn.execute("PRAGMA busy_timeout=5000")
            await conn.executescript(_SCHEMA)
            await conn.commit()
        except BaseException as exc:
            await history.aclose()
            if isinstance(exc, Exception):
                raise StateError(f"{file} is not a history database ({exc}); move it away") from exc
            raise
        return history

    # --- writing --------------------------------------------------------------------------------

    def record(self, point: HistoryPoint) -> None:
        """Keep ``point`` for the next :meth:`flush` (NaN and infinities are not stored)."""
        if not math.isfinite(point.value):
            return
        if len(self._pending) >= MAX_PENDING:
            del self._pending[0]  # the store keeps failing: the oldest value goes first
        self._pending.append(point)

    @property
    def pending(self) -> int:
        return len(self._pending)

    async def flush(self) -> int:
        """Write the recorded values in one transaction; returns how many.

        Safe to cancel: the transaction then completes on aiosqlite's thread. A failed write
        is rolled back and its batch kept, to be written next time.
        """
        async with self._lock:
            conn = self._require_open()
            batch, self._pending = self._pending, []
            if not batch:
                return 0
            try:
                # The whole transaction is one call on aiosqlite's thread: as five statements
                # it was five round trips, each waking that thread and the loop (about 80
                # wake-ups an idle minute at the default 10 s flush).
                await asyncio.shield(conn._execute(self._write, conn._conn, batch))
            except asyncio.CancelledError:
                raise  # the write goes on; the batch is in it
            except BaseException:
                self._pending[:0] = batch
                raise
            return len(batch)

    def _write(self, db: Any, batch: list[HistoryPoint]) -> None:
        """``batch`` in one transaction, on aiosqlite's thread (``db``: its sqlite3 connection)."""
        known = set(self._series)
        try:
            db.execute("BEGIN IMMEDIATE")
            ids = [self._series_id(db, p) for p in batch]
            db.executemany(
                "INSERT OR REPLACE INTO points (series, t, v) VALUES (?, ?, ?)",
                [(i, p.time, p.value) for i, p in zip(ids, batch, strict=True)],
            )
            for table, width in (("minutes", 60), ("hours", 3600)):
                db.executemany(_UPSERT.format(table=table), _buckets(ids, batch, width))
            db.commit()
        except BaseException:
            db.rollback()
            # A series made in the transaction is gone with it: look it up again next time.
            for key in set(self._series) - known:
                del self._series[key]
            raise

    def _series_id(self, db: Any, p: HistoryPoint) -> int:
        # Only _write uses the cache, one transaction at a time (the lock), on one thread.
        key = (p.sensor, p.quantity)
        known = self._series.get(key)
        if known is not None:
            return known
        db.execute(
            "INSERT INTO series (sensor, quantity, unit) VALUES (?, ?, ?) "
            "ON CONFLICT (sensor, quantity) DO UPDATE SET unit = excluded.unit",
            (p.sensor, p.quantity, p.unit),
        )
        row = db.execute("SELECT id FROM series WHERE sensor = ? AND quantity = ?", key).fetchone()
        self._series[key] = int(row[0])
        return self._series[key]

    async def prune(self, now: float | None = None) -> int:
        """Delete what is older than its resolution's retention; returns the rows deleted."""
        now = self._clock() if now is None else now
        r = self.retention
        async with self._lock:
            conn = self._require_open()
            deleted = 0
            for table, keep in (
                ("points", r.raw_s),
                ("minutes", r.minutes_s),
                ("hours", r.hours_s),
            ):
                cur = await conn.execute(f"DELETE FROM {table} WHERE t < ?", (now - keep,))
                deleted += max(0, cur.rowcount)
            await conn.commit()
            return deleted

    # --- reading --------------------------------------------------------------------------------

    async def series(self) -> list[tuple[str, str, str]]:
        """Every (sensor, quantity, unit) stored, sorted."""
        return [
            (str(a), str(b), str(c))
            for a, b, c in await self._fetch(
                "SELECT sensor, quantity, unit FROM series ORDER BY sensor, quantity"
            )
        ]

    async def summary(
        self,
        sensor: str,
        quantity: str,
        start: float,
        end: float,
        *,
        points: int = 24,
        now: float | None = None,
    ) -> HistorySummary | None:
        """Min/max (with when)/mean/last over ``start`` .. ``end`` and ``points`` averaged points.

        The finest resolution still kept for ``start`` is used, or a coarser one when each of
        the ``points`` spans at least one of its buckets. Returns None when the series
        was never stored (an empty window gives ``count`` 0). Safe to cancel.
        """
        rows = await self._fetch(
            "SELECT id, unit FROM series WHERE sensor = ? AND quantity = ?", (sensor, quantity)
        )
        if not rows:
            return None
        sid, unit = int(rows[0][0]), str(rows[0][1])
        now = self._clock() if now is None else now
        r = self.retention
        n = max(1, min(points, MAX_POINTS))
        step = max((end - start) / n, 1e-9)
        # The finest table still kept for ``start``, unless a point spans a whole coarser bucket:
        # a week drawn as 120 points reads hour rows, not 10,080 minute rows (extremes and the
        # last value stay exact; every aggregate row keeps their times).
        if start >= now - r.raw_s and step < 60:
            resolution, table = "raw", "points"
        elif start >= now - r.minutes_s and step < 3600:
            resolution, table = "1m", "minutes"
        else:
            resolution, table = "1h", "hours"
        out = HistorySummary(sensor, quantity, unit, start, end, resolution)
        if table == "points":
            agg, t_lo, t_hi = "count(*), min(v), max(v), sum(v)", "t", "t"
        else:
            agg, t_lo, t_hi = "sum(n), min(lo), max(hi), sum(sum)", "t_lo", "t_hi"
        where = f"FROM {table} WHERE series = ? AND t >= ? AND t <= ?"
        args = (sid, start, end)
        ((count, lo, hi, total),) = await self._fetch(f"SELECT {agg} {where}", args)
        if not count:
            return out
        out.count, out.min, out.max, out.mean = int(count), lo, hi, total / count
        low = "v" if table == "points" else "lo"
        high = "v" if table == "points" else "hi"
        last = "v, t" if table == "points" else "last, t_last"
        ((out.min_time,),) = await self._fetch(
            f"SELECT {t_lo} {where} ORDER BY {low}, t LIMIT 1", args
        )
        ((out.max_time,),) = await self._fetch(
            f"SELECT {t_hi} {where} ORDER BY {high} DESC, t LIMIT 1", args
        )
        ((out.last, out.last_time),) = await self._fetch(
            f"SELECT {last} {where} ORDER BY t DESC LIMIT 1", args
        )
        mean = "avg(v)" if table == "points" else "sum(sum) / sum(n)"
        rows = await self._fetch(
            f"SELECT CAST((t - ?) / ? AS INTEGER) AS b, avg(t), {mean} {where} GROUP BY b ORDER BY b",
            (start, step, *args),
        )
        out.points = [(float(t), float(v)) for _, t, v in rows]
        return out

    async def _fetch(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        async with self._lock:
            conn = self._require_open()
            async with conn.execute(sql, tuple(params)) as cur:
                return [tuple(r) for r in await cur.fetchall()]

    # --- lifecycle ------------------------------------------------------------------------------

    def _require_open(self) -> Any:
        if self.state is not Lifecycle.OPEN:
            raise ResourceClosed(f"the sensor history at {self.path} is closed; open it again")
        return self._conn

    async def aclose(self) -> None:
        """Write what is pending (best effort), then close. Idempotent; safe to cancel."""
        if self.state is Lifecycle.CLOSED:
            return
        if self._pending:
            try:
                await self.flush()
            except Exception:  # closing must not fail on a full disk; the batch is lost
                pass
        self.state = Lifecycle.CLOSED
        await self._conn.close()

    async def __aenter__(self) -> SensorHistory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _buckets(
    ids: Sequence[int], batch: Sequence[HistoryPoint], width: int
) -> list[tuple[Any, ...]]:
    """The batch merged per (series, bucket start): rows for :data:`_UPSERT`."""
    rows: dict[tuple[int, int], list[Any]] = {}
    for sid, p in zip(ids, batch, strict=True):
        key = (sid, int(p.time // width) * width)
        row = rows.get(key)
        if row is None:
            rows[key] = [p.value, p.value, p.value, 1, p.time, p.time, p.value, p.time]
            continue
        if p.value < row[0]:
            row[0], row[4] = p.value, p.time
        if p.value > row[1]:
            row[1], row[5] = p.value, p.time
        row[2] += p.value
        row[3] += 1
        if p.time >= row[7]:
            row[6], row[7] = p.value, p.time
    return [(sid, t, *row) for (sid, t), row in rows.items()]

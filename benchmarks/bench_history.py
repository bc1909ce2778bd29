"""Sensor history: the size of a simulated year, query times, and the sampler's cost per reading.

In one run:

* **size**: ``--sensors`` series (one quantity each) sampled every 60 s for ``--days`` days
  of fake time through :class:`SensorHistory` (a flush and a prune per
  simulated day, to keep the run short; the service flushes every 10 s), then ``VACUUM``; the file's size in MB. Done twice:
  with the default retention (raw 48 h, minutes 30 days, hours a year) and, as the baseline,
  with the minute aggregates kept the whole period too.
* **queries**: ``summary()`` of one series over the last 24 h (48 points: minute rows) and over the whole
  period (hour aggregates), medians of ``--n`` runs, next to a bare ``SELECT count(*)`` on the
  same connection (the floor of one round trip through aiosqlite's thread).
* **sampler**: the CPU time (``process_time``) of one :meth:`SensorSampler.step` reading one
  simulated DS18B20 with a three-filter chain and recording it, next to the bare
  ``SensorBank.read()`` it wraps; medians of ``--n`` batches of 50 readings, per reading.

Usage::

    python benchmarks/bench_history.py [--days 365] [--sensors 10] [--n 20]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from clawseed_edge.service.sampler import SensorSampler
from clawseed_edge.state import HistoryPoint, HistoryRetention, SensorHistory
from clawseed_edge.testing.sensors import sim_sensor_bank

START = 1_767_225_600.0  # 2026-01-01 00:00 UTC
DAY = 86400.0


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


async def simulate(path: Path, days: int, sensors: int, retention: HistoryRetention) -> float:
    """A year of values into ``path``; returns seconds of wall time it took."""
    clock = Clock(START)
    t0 = time.perf_counter()
    async with await SensorHistory.open(path, retention=retention, clock=clock) as history:
        minutes = int(days * 1440)
        for minute in range(minutes):
            t = START + minute * 60
            for s in range(sensors):
                # a daily swing and a slow seasonal one, distinct per sensor
                v = 10 + 8 * ((minute % 1440) / 720 - 1) ** 2 + s + (minute / minutes) * 5
                history.record(HistoryPoint(f"s{s}", "temperature", "°C", t, v))
            if minute % 1440 == 1439:  # a batch and a prune per simulated day
                clock.now = t
                await history.flush()
                await history.prune()
        await history.flush()
        clock.now = START + minutes * 60
        await history.prune()
        conn = history._conn
        await conn.execute("VACUUM")
    return time.perf_counter() - t0


async def queries(path: Path, days: int, n: int) -> dict[str, float]:
    end = START + days * DAY
    out: dict[str, list[float]] = {"count(*)": [], "24h summary": [], "whole-period summary": []}
    async with await SensorHistory.open(path, clock=lambda: end) as history:
        for _ in range(n):
            t = time.perf_counter()
            await history._fetch("SELECT count(*) FROM series")
            out["count(*)"].append(time.perf_counter() - t)
            t = time.perf_counter()
            s = await history.summary("s0", "temperature", end - DAY, end, points=48)
            out["24h summary"].append(time.perf_counter() - t)
            assert s is not None and s.resolution == "1m" and s.count == 1440
            t = time.perf_counter()
            s = await history.summary("s0", "temperature", end - days * DAY, end, points=365)
            out["whole-period summary"].append(time.perf_counter() - t)
            assert s is not None and s.count >= days * 1440 - 60
    return {k: statistics.median(v) * 1e3 for k, v in out.items()}


async def sampler_cost(n: int, tmp: Path) -> dict[str, float]:
    clock = Clock(START)
    wiring = (
        '[[sensors]]\nname = "soil"\ndriver = "ds18b20"\nupdate_interval = "60s"\n'
        "filters = [{ median = { window_size = 5, send_every = 1 } }, { offset = -0.4 }, "
        "{ delta = 0.01 }]\n"
    )
    bank = sim_sensor_bank(wiring, clock=clock)
    out: dict[str, list[float]] = {"bank.read": [], "sampler.step": []}
    async with bank, await SensorHistory.open(tmp / "s.db", clock=clock) as history:
        sampler = SensorSampler(bank, history, clock=clock)
        probe = bank.sim.sensor("soil")
        for _ in range(n):
            c = time.process_time()
            for i in range(50):
                clock.now += 60
                probe.set(temperature=10 + (i % 7))
                await bank.read("soil")
            out["bank.read"].append((time.process_time() - c) / 50)
            c = time.process_time()
            for i in range(50):
                clock.now += 60
                probe.set(temperature=10 + (i % 7))
                await sampler.step(clock.now)
            out["sampler.step"].append((time.process_time() - c) / 50)
            await history.flush()
    return {k: statistics.median(v) * 1e3 for k, v in out.items()}


async def run(days: int, sensors: int, n: int) -> None:
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        print(f"{sensors} sensors x 1 quantity, one value per 60 s, {days} simulated days")
        default = HistoryRetention()
        minutes_kept = HistoryRetention(minutes_s=days * DAY + DAY, hours_s=days * DAY + DAY)
        for label, retention, name in (
            ("default retention (raw 48 h, minutes 30 d, hours 366 d)", default, "a.db"),
            ("baseline: minute aggregates kept the whole period", minutes_kept, "b.db"),
        ):
            took = await simulate(tmp / name, days, sensors, retention)
            size = (tmp / name).stat().st_size / 1e6
            print(f"  {label}: {size:.2f} MB ({size / sensors:.3f} MB per series), "
                  f"written in {took:.0f} s")  # fmt: skip
        q = await queries(tmp / "a.db", days, n)
        print(f"queries on the default file, median of {n} (ms):")
        for k, v in q.items():
            print(f"  {k}: {v:.2f}")
        c = await sampler_cost(n, tmp)
        print(f"CPU per reading, median of {n} batches of 50 (ms):")
        for k, v in c.items():
            print(f"  {k}: {v:.3f}")
        print(f"  sampler overhead over the bare read: {c['sampler.step'] - c['bank.read']:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--sensors", type=int, default=10)
    parser.add_argument("--n", type=int, default=20)
    args = parser.parse_args()
    asyncio.run(run(args.days, args.sensors, args.n))


if __name__ == "__main__":
    main()

"""``SensorSampler``: the service reads each sensor on its ``update_interval``, filters, keeps.

ESPHome's polling component and filter chain on the Pi: each sensor with an interval is read
through the sensor bank (which publishes the raw :class:`~clawseed_edge.api.SensorReading` on
``bank.states``), each quantity's value goes through that quantity's
:class:`~clawseed_edge.peripherals.sensors.filters.FilterChain`, and what comes out is
published on :attr:`SensorSampler.states` (automations and charts subscribe there), recorded
in the :class:`~clawseed_edge.state.SensorHistory`, and handed to the bank's own feed (every
quantity's latest filtered value), so MQTT, ``hardware status``, Telegram and MCP resources show
the same value as history; the raw readings stay on the bank's ``raw_states``.

:meth:`SensorSampler.step` does one pass at a given time and says when the next is due, so
tests drive it with a fake clock and no sleeps; :meth:`run` is the loop the service starts.

A sensor whose read failed, or that gave no new reading for ``stale_after`` times its
``update_interval`` (3 by default), is unknown: a :class:`~clawseed_edge.api.SensorReading`
with an ``error`` is published once, and automations treat its values as unknown until a new
value comes through.

In :meth:`run` each sensor's bank worker reads it on its own, just before each pass
(:meth:`~clawseed_edge.peripherals.sensors.bank.SensorBank.read_ahead`): the pass finds the
reading waiting, so an idle minute at 1 s costs one wake-up of the loop per pass (and one of each
worker per read) instead of a job posted to each worker and a result sent back to the loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from clawseed_edge.api import ClawseedError, SensorReading, StateFeed

if TYPE_CHECKING:
    from clawseed_edge.peripherals.sensors.bank import SensorBank
    from clawseed_edge.peripherals.sensors.filters import FilterChain
    from clawseed_edge.state import SensorHistory

__all__ = ["SensorSampler"]

log = logging.getLogger(__name__)

#: The longest the loop sleeps without looking again (a clock step, a new deadline).
MAX_SLEEP_S = 60.0


@dataclass(slots=True)
class _Sampled:
    """One sensor the sampler reads: its interval, its chains, when it is next due."""

    name: str
    interval: float
    chains: dict[str, FilterChain]
    units: dict[str, str]
    due: float = 0.0
    reads: int = 0
    failures: int = 0
    last_error: str = ""
    latest: dict[str, float] = field(default_factory=dict)
    #: Seconds without a new reading after which the sensor is unknown.
    stale_s: float = 180.0
    #: When the last new reading was taken (the first pass, before any).
    fresh_at: float | None = None
    #: Whether an unknown state was published and no value came through since.
    unknown: bool = False


class SensorSampler:
    """Reads the bank's sensors on their intervals; filters; publishes; records.

    Args:
        bank: The sensor bank (``sensor_names``, ``sensor(name)``, ``read(name)``).
        history: Where filtered values are kept (None: only published).
        clock: Unix seconds; the filters' time and the history's.
        sleep: ``asyncio.sleep`` (tests replace it).
        read_ahead: In :meth:`run`, have the bank's workers read before each pass on their
            own (monotonic) clock; off where ``clock`` and ``sleep`` are not the real ones.
        on_pass: Called after each pass of :meth:`run` (the history's flush: work that can
            wait for a wake-up the loop has anyway).
    """

    def __init__(
        self,
        bank: SensorBank,
        history: SensorHistory | None = None,
        *,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        read_ahead: bool = True,
        on_pass: Callable[[], None] | None = None,
    ) -> None:
        self.on_pass = on_pass
        self.bank = bank
        self.read_ahead = read_ahead
        self._reading_ahead = False
        self.history = history
        self._clock = clock
        self._sleep = sleep
        #: Filtered values, one SensorReading per sensor and pass that gave any.
        self.states = StateFeed()
        self._sensors: dict[str, _Sampled] = {}
        for name in bank.sensor_names():
            valid = bank.sensor(name)
            if valid.interval_s is None:
                continue  # "never": read only when asked
            units = {q.name: q.unit for q in valid.driver.quantities}
            stale_s = valid.interval_s * float(getattr(valid.config, "stale_after", 3.0))
            self._sensors[name] = _Sampled(
                name, valid.interval_s, valid.chains(), units, stale_s=stale_s
            )
        self._task: asyncio.Task[None] | None = None
        # One value everywhere: the bank's feed carries these sensors' filtered values.
        self._feeds = getattr(bank, "feeds", None)  # a bank's SensorFeeds (a fake has none)
        if self._feeds is not None:
            self._feeds.sample_through_filters(self._sensors)

    @property
    def sampled(self) -> list[str]:
        """The sensors read on an interval, in config order."""
        return list(self._sensors)

    async def step(self, now: float) -> float:
        """Read the sensors due at ``now``, tick the timed filters; returns the next due time.

        A sensor not read yet is due at the first step.

        A failed read is logged and counted (the bank published it); the sensor is tried again
        at its next interval. Safe to cancel (a read already running completes on its worker).

        The sensors due are read together (each on its own bus's worker): a pass takes as long
        as its slowest bus, not the sum of every read, so a late pass does not make the next
        one later still (benchmarks/bench_pi_zero.py: 24 ADCs two to a bus at 0.1 s fell to
        about 15 readings a second once a pass was late, read one after another).
        """
        due: list[_Sampled] = []
        for s in self._sensors.values():
            if now >= s.due:
                slot, s.due = s.due, _next_due(s.due, s.interval, now)
                if self._reading_ahead and s.due != slot + s.interval:
                    self._ahead(s, now)  # the grid restarted (a very late pass): follow it
                due.append(s)
        got = await asyncio.gather(*(self._read(s) for s in due))
        read = {s.name: values for s, values in zip(due, got, strict=True)}
        for s in self._sensors.values():
            if s.fresh_at is None:
                s.fresh_at = now  # staleness counts from the first pass
            out: dict[str, list[float]] = {q: c.tick(now) for q, c in s.chains.items()}
            if s.name in read:
                values = read[s.name]
                if values:
                    s.fresh_at = now
                elif s.last_error:
                    self._unknown(s, now, f"the read failed: {s.last_error}")
                for q, value in values.items():
                    chain = s.chains.get(q)
                    if chain is not None:
                        out[q] = out.get(q, []) + chain.feed(value, now)
            if now - s.fresh_at > s.stale_s:
                self._unknown(
                    s,
                    now,
                    f"no new reading for {now - s.fresh_at:.0f} s (stale after {s.stale_s:g} s)",
                )
            self._emit(s, out, now)
        return self.next_due()

    def _unknown(self, s: _Sampled, now: float, why: str) -> None:
        """Tell the subscribers once that ``s`` is unknown (until a value comes through)."""
        if s.unknown:
            return
        s.unknown = True
        self.states.publish(SensorReading("sampler", s.name, {}, {}, now, error=why[:300]))

    def next_due(self) -> float:
        """The earliest of every sensor's next read and every timed filter's deadline."""
        times = [s.due for s in self._sensors.values()]
        for s in self._sensors.values():
            times += [d for c in s.chains.values() if (d := c.deadline()) is not None]
        return min(times, default=self._clock() + MAX_SLEEP_S)

    async def _read(self, s: _Sampled) -> dict[str, float]:
        try:
            reading = await self.bank.read(s.name, for_filters=True)
        except ClawseedError as exc:
            s.failures += 1
            s.last_error = str(exc)
            log.warning("sampling %s failed: %s", s.name, exc)
            return {}
        s.reads += 1
        s.last_error = ""
        # A cached reading (inside the sensor's minimum interval) is not a new measurement.
        return {} if reading.cached else dict(reading.values)

    def _emit(self, s: _Sampled, out: dict[str, list[float]], now: float) -> None:
        last = {q: values[-1] for q, values in out.items() if values}
        if not last:
            return
        s.latest.update(last)
        s.unknown = False
        units = {q: s.units.get(q, "") for q in last}
        self.states.publish(SensorReading("sampler", s.name, last, units, now))
        if self._feeds is not None:
            every = {q: s.units.get(q, "") for q in s.latest}
            self._feeds.publish_filtered(
                SensorReading("sampler", s.name, dict(s.latest), every, now)
            )
        if self.history is None:
            return
        from clawseed_edge.state import HistoryPoint

        for q, values in out.items():
            for v in values:
                self.history.record(HistoryPoint(s.name, q, s.units.get(q, ""), now, v))

    async def run(self) -> None:
        """Sample until cancelled, the first time one interval after the start.

        Not at once: a reading taken as the service starts would be the one every other
        reader gets from the bank's cache for the sensor's minimum interval. A bug in one pass
        is logged; the loop goes on.
        """
        start = self._clock()
        self._reading_ahead = self.read_ahead
        for s in self._sensors.values():
            if s.due <= 0:
                s.due = start + s.interval
            for chain in s.chains.values():
                chain.start(start)  # ESPHome's intervals count from boot, not the first value
            if self.read_ahead:
                self._ahead(s, start)
        try:
            while True:
                try:
                    due = await self.step(self._clock())
                    if self.on_pass is not None:
                        self.on_pass()
                except Exception:
                    log.exception("the sensor sampler failed a pass")
                    due = self._clock() + 1.0
                await self._sleep(min(MAX_SLEEP_S, max(0.0, due - self._clock())))
        finally:
            self._reading_ahead = False
            for s in self._sensors.values():
                self._stop_ahead(s)

    def _ahead(self, s: _Sampled, now: float) -> None:
        read_ahead = getattr(self.bank, "read_ahead", None)
        if read_ahead is not None:
            read_ahead(s.name, s.due - now, s.interval)

    def _stop_ahead(self, s: _Sampled) -> None:
        read_ahead = getattr(self.bank, "read_ahead", None)
        if read_ahead is not None:
            with contextlib.suppress(ClawseedError):
                read_ahead(s.name, 0.0, 0.0)

    def start(self) -> None:
        """Start :meth:`run` as the sampler's own task (idempotent)."""
        if self._task is None and self._sensors:
            self._task = asyncio.create_task(self.run(), name="sensor-sampler")

    async def aclose(self) -> None:
        """Stop the loop. Idempotent; safe to cancel."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        if self._feeds is not None:
            self._feeds.sample_through_filters(())

    def status(self) -> list[dict[str, Any]]:
        """Per sampled sensor: interval, reads, failures, last error, latest filtered values."""
        return [
            {
                "sensor": s.name,
                "interval_s": s.interval,
                "reads": s.reads,
                "failures": s.failures,
                "error": s.last_error,
                "values": dict(s.latest),
            }
            for s in self._sensors.values()
        ]


def _next_due(due: float, interval: float, now: float) -> float:
    """The next slot on the interval's grid after ``now`` (a late pass does not bunch reads)."""
    if due <= 0:
        return now + interval
    nxt = due + interval
    if nxt <= now:
        nxt = now + interval
    return nxt

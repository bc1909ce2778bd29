"""The sampler keeps a 1 s interval when its passes come late by varying amounts.

The sampler's loop runs on its own clock with a fake sleep that wakes each pass late by a
jitter (as an event loop does under load); the bank's reading cache uses the same clock, so a
pass that comes 25 ms "early" relative to the one before is the case this guards.
"""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path
from typing import Any

from clawseed_edge.api import SensorReading
from clawseed_edge.scheduler.rules import RuleState, parse_condition
from clawseed_edge.service.sampler import SensorSampler
from clawseed_edge.state import SensorHistory
from clawseed_edge.testing.sensors import sim_sensor_bank

T0 = 1_790_000_000.0

GREENHOUSE = """
[[sensors]]
name = "greenhouse"
driver = "bme280"
update_interval = "1s"
"""

#: How late each pass wakes (seconds), in turn: a 30 ms stall, then a 5 ms one.
JITTER = (0.030, 0.005)


class LateClock:
    """The sampler's clock and sleep: each sleep ends ``JITTER`` late, in turn."""

    def __init__(self) -> None:
        self.now = T0
        self._late = itertools.cycle(JITTER)
        #: Changes the test makes at given times: (time, callback).
        self.at: list[tuple[float, Any]] = []
        self.end = float("inf")
        self.reached = asyncio.Event()

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        end = self.now + seconds + next(self._late)
        # Changes scheduled inside the sleep happen at their own time.
        while self.at and self.at[0][0] <= end:
            when, change = self.at.pop(0)
            self.now = max(self.now, when)
            change()
        self.now = end
        if self.now >= self.end:
            self.reached.set()
        await asyncio.sleep(0)


async def run_until(sampler: SensorSampler, clock: LateClock, end: float) -> None:
    clock.end = end
    task = asyncio.create_task(sampler.run())
    await clock.reached.wait()
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


async def test_every_second_of_a_minute_has_its_sample(tmp_path: Path) -> None:
    clock = LateClock()
    bank = sim_sensor_bank(GREENHOUSE, clock=clock)
    async with bank, await SensorHistory.open(tmp_path / "h.db", clock=clock) as history:
        sampler = SensorSampler(bank, history, clock=clock, sleep=clock.sleep, read_ahead=False)
        times: list[float] = []
        sampler.states.subscribe(lambda u: times.append(u.time))  # type: ignore[attr-defined]
        await run_until(sampler, clock, T0 + 125)

        await history.flush()
        # Any minute: here the second and the third after the start (the first has its start).
        for start in (T0 + 60, T0 + 61.5, T0 + 63.25):
            stored = await history.summary("greenhouse", "temperature", start, start + 60)
            assert stored is not None and stored.count >= 59, (start, stored)
        gaps = [round(b - a, 3) for a, b in itertools.pairwise(times)]
        assert max(gaps) < 1.5, gaps  # no second skipped


async def test_an_automation_reacts_within_the_interval_to_a_change() -> None:
    clock = LateClock()
    bank = sim_sensor_bank(GREENHOUSE, clock=clock)
    async with bank:
        sampler = SensorSampler(bank, clock=clock, sleep=clock.sleep, read_ahead=False)
        rule = RuleState(parse_condition("greenhouse.temperature > 30"))
        probe = bank.sim.sensor("greenhouse")
        probe.set(temperature=20.0)
        latest: dict[str, float] = {}
        changed: list[float] = []
        reactions: list[float] = []

        def on_state(reading: SensorReading) -> None:
            latest.update({f"{reading.sensor}.{q}": v for q, v in reading.values.items()})
            if rule.update(reading.time, latest.get) == "fire":
                reactions.append(reading.time - changed[-1])

        sampler.states.subscribe(on_state)  # type: ignore[arg-type]
        # Eight changes, each at a different point of its second: up, then down again.
        for k, offset in enumerate((0.1, 0.2, 0.35, 0.5, 0.6, 0.75, 0.85, 0.95)):
            when = T0 + 10 + 4 * k + offset
            clock.at.append((when, lambda w=when: (changed.append(w), probe.set(temperature=31.0))))
            clock.at.append((when + 2, lambda: probe.set(temperature=20.0)))
        clock.at.sort(key=lambda a: a[0])
        await run_until(sampler, clock, T0 + 50)

        assert len(reactions) == 8
        mean = sum(reactions) / len(reactions)
        assert mean < 0.7, reactions
        assert max(reactions) < 1.1, reactions

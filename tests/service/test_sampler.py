"""SensorSampler with a fake clock: intervals, filters, history, failures; no sleeps."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from clawseed_edge.api import SensorReading
from clawseed_edge.service.sampler import SensorSampler
from clawseed_edge.state import SensorHistory
from clawseed_edge.testing.sensors import sim_sensor_bank

T0 = 1_790_000_000.0

SOIL = """
[[sensors]]
name = "soil"
driver = "ds18b20"
device = "28-0316a2791eff"
update_interval = "60s"
filters = [{ offset = -0.5 }, { delta = 1.0 }]

[[sensors]]
name = "shed"
driver = "ds18b20"
device = "28-00000000beef"
update_interval = "never"
"""


class Clock:
    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


async def steps(sampler: SensorSampler, clock: Clock, *times: float) -> float:
    due = 0.0
    for t in times:
        clock.now = t
        due = await sampler.step(t)
    return due


async def test_reads_on_the_interval_filters_and_records(tmp_path: Path) -> None:
    clock = Clock()
    bank = sim_sensor_bank(SOIL, clock=clock)
    async with bank, await SensorHistory.open(tmp_path / "h.db", clock=clock) as history:
        sampler = SensorSampler(bank, history, clock=clock)
        assert sampler.sampled == ["soil"]  # "never" is not sampled
        raw: list[Any] = []
        shown: list[Any] = []
        filtered: list[SensorReading] = []
        bank.raw_states.subscribe(raw.append)
        bank.states.subscribe(shown.append)
        sampler.states.subscribe(lambda u: filtered.append(u))  # type: ignore[arg-type]
        probe = bank.sim.sensor("soil")

        probe.set(temperature=20.0)
        assert (
            await steps(sampler, clock, T0) == T0 + 60
        )  # the first read at once, the next in 60 s
        assert await steps(sampler, clock, T0 + 30) == T0 + 60  # not due: nothing read
        assert len(raw) == 1

        probe.set(temperature=20.5)  # 20.0 after the offset: within delta, dropped
        await steps(sampler, clock, T0 + 60)
        probe.set(temperature=22.0)  # 21.5: passes
        await steps(sampler, clock, T0 + 120)
        assert len(raw) == 3  # every read published raw on the bank
        assert [r.values["temperature"] for r in filtered] == [19.5, 21.5]
        # One value everywhere: the bank's own feed (MQTT, hardware status ...) shows the
        # filtered values, as the bank's readings; never the raw 20.0, 20.5 or 22.0.
        assert [r.values["temperature"] for r in shown] == [19.5, 21.5]
        assert {r.peripheral for r in shown} == {bank.name}
        assert filtered[-1].units == {"temperature": "°C"} and filtered[-1].time == T0 + 120

        assert history.pending == 2
        await history.flush()
        s = await history.summary("soil", "temperature", T0, T0 + 300, now=T0 + 300)
        assert s is not None and (s.count, s.min, s.max) == (2, 19.5, 21.5)


async def test_a_late_pass_keeps_the_grid_and_a_very_late_one_restarts_it() -> None:
    bank = sim_sensor_bank(SOIL)
    async with bank:
        sampler = SensorSampler(bank, clock=lambda: T0)
        await sampler.step(T0)
        assert await sampler.step(T0 + 61) == T0 + 120
        assert await sampler.step(T0 + 500) == T0 + 560


async def test_timed_filters_wake_the_sampler() -> None:
    bank = sim_sensor_bank(
        '[[sensors]]\nname = "soil"\ndriver = "ds18b20"\nupdate_interval = "10min"\n'
        'filters = [{ heartbeat = "60s" }]\n'
    )
    async with bank:
        sampler = SensorSampler(bank, clock=lambda: T0)
        got: list[Any] = []
        sampler.states.subscribe(got.append)
        bank.sim.sensor("soil").set(temperature=12.0)
        assert await sampler.step(T0) == T0 + 60  # the heartbeat, before the next read
        assert got == []
        await sampler.step(T0 + 60)
        assert [u.values for u in got] == [{"temperature": 12.0}]


async def test_a_failed_read_is_counted_and_tried_at_the_next_interval() -> None:
    bank = sim_sensor_bank(SOIL)
    async with bank:
        sampler = SensorSampler(bank, clock=lambda: T0)
        await bank.disconnect()  # every read now fails
        assert await sampler.step(T0) == T0 + 60
        (status,) = [s for s in sampler.status() if s["sensor"] == "soil"]
        assert status["failures"] == 1 and "not connected" in status["error"]


async def test_sensor_read_says_the_filtered_value_beside_its_raw_one() -> None:
    from clawseed_edge.api import ToolContext

    clock = Clock()
    bank = sim_sensor_bank(SOIL, clock=clock)
    async with bank:
        sampler = SensorSampler(bank, clock=clock)
        bank.sim.sensor("soil").set(temperature=20.0)
        tool = next(t for t in bank.tools() if t.name == "sensor_read")
        before = await tool.execute({"sensor": "soil"}, ToolContext())
        assert "after the filters" not in before.output  # nothing filtered yet
        clock.now = T0 + 5  # past the sensor's minimum interval: a new read
        await sampler.step(T0 + 5)
        assert bank.feeds.filtered("soil") is not None
        clock.now = T0 + 10
        result = await tool.execute({"sensor": "soil"}, ToolContext())
        assert "soil: temperature 20.00 °C" in result.output  # this read: raw
        assert "after the filters (what history and every screen show): temperature 19.50 °C" in (
            result.output
        )
        assert result.data["filtered"] == {"temperature": 19.5}  # type: ignore[index]
        await sampler.aclose()
        assert bank.feeds.filtered("soil") is None  # handed back: raw readings on the feed again


THREE = """
[[sensors]]
name = "a"
driver = "ds18b20"
device = "28-0000000000a1"
update_interval = "1s"

[[sensors]]
name = "b"
driver = "ds18b20"
device = "28-0000000000b2"
update_interval = "1s"

[[sensors]]
name = "c"
driver = "ds18b20"
device = "28-0000000000c3"
update_interval = "1s"
"""


async def test_the_sensors_due_in_a_pass_are_read_together_and_published_in_order(
    tmp_path: Path,
) -> None:
    # One after another, a pass took the sum of every read: a late pass made the next later,
    # until the reads taken ahead went stale (24 ADCs at 0.1 s fell to ~15 readings a second).
    import asyncio

    clock = Clock()
    bank = sim_sensor_bank(THREE, clock=clock)
    async with bank:
        sampler = SensorSampler(bank, None, clock=clock)
        inflight, most = 0, 0
        real = bank.read

        async def counting(name: str, **kwargs: Any) -> Any:
            nonlocal inflight, most
            inflight += 1
            most = max(most, inflight)
            try:
                await asyncio.sleep(0)  # the others of the pass start meanwhile, if they may
                return await real(name, **kwargs)
            finally:
                inflight -= 1

        bank.read = counting  # type: ignore[method-assign]
        seen: list[Any] = []
        sampler.states.subscribe(seen.append)
        for name, value in (("a", 1.0), ("b", 2.0), ("c", 3.0)):
            bank.sim.sensor(name).set(temperature=value)
        await steps(sampler, clock, T0)
        assert most == 3  # all three at once, not one after another
        # Published in config order all the same, each with its own value.
        assert [(u.sensor, u.values["temperature"]) for u in seen] == [
            ("a", 1.0),
            ("b", 2.0),
            ("c", 3.0),
        ]

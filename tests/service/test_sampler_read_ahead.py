"""The sampler on the real clock: its passes take the readings the bank's workers took on their
own just before, so a pass posts no job to a worker and waits for no result."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from clawseed_edge.peripherals.worker import BlockingWorker
from clawseed_edge.service.sampler import SensorSampler
from clawseed_edge.testing.sensors import sim_sensor_bank

TWO = """
[[sensors]]
name = "greenhouse"
driver = "bme280"
update_interval = "1s"

[[sensors]]
name = "porch"
driver = "ds18b20"
update_interval = "1s"
"""


async def test_passes_take_what_the_workers_read_ahead(monkeypatch: pytest.MonkeyPatch) -> None:
    jobs: list[str] = []
    run = BlockingWorker.run

    async def counted(self: BlockingWorker, fn: Any, *args: Any) -> Any:
        jobs.append(self.name)
        return await run(self, fn, *args)

    monkeypatch.setattr(BlockingWorker, "run", counted)
    bank = sim_sensor_bank(TWO)
    async with bank:
        bank.sim.sensor("greenhouse").set(temperature=18.0)
        sampler = SensorSampler(bank)
        passes: list[tuple[str, float]] = []
        enough = asyncio.Event()

        def seen(reading: Any) -> None:
            passes.append((reading.sensor, reading.values["temperature"]))
            if len(passes) >= 6:
                enough.set()

        sampler.states.subscribe(seen)
        jobs.clear()  # what connecting the bank ran
        sampler.start()
        await asyncio.wait_for(enough.wait(), 30)  # a bound, not a timing assertion
        await sampler.aclose()
    assert {name for name, _ in passes} == {"greenhouse", "porch"}
    assert ("greenhouse", 18.0) in passes
    status = {s["sensor"]: s for s in sampler.status()}
    assert status["greenhouse"]["reads"] >= 3 and status["greenhouse"]["failures"] == 0
    # The workers read on their own: a pass posts no job (without read-ahead every read of
    # every pass is one). A pass that finds nothing waiting (a worker late on a busy machine)
    # reads through a job as before, so the bound leaves room for a few.
    reads = [name for name in jobs if name in ("i2c-1", "sysfs-porch")]
    passes = sum(s["reads"] for s in status.values())
    assert len(reads) <= passes // 2, (jobs, passes)

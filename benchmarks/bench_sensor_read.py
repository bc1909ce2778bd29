"""Cost of ``sensor_read`` through the engine, next to the BME280 driver's own read.

Measures, in one run, against the simulated BME280 (register-level model on the simulated bus):

* driver: ``BME280.read()`` called directly on the simulated bus (a forced measurement: the
  datasheet's 9.3 ms maximum measurement time is waited for, then status and data are read);
* bank: ``SensorBank.read()`` (the bus worker thread, retries, translation, the reading);
* tool: ``sensor_read.execute()`` (argument checks, the above, the result text);
* turn: a full agent turn with a scripted model that calls ``sensor_read`` and then answers
  (prompt, two provider calls, the SecurityPolicy, the tool, history).

The reading cache is bypassed (its clock jumps past the minimum interval before every call),
so every sample is a new measurement. Reports medians in milliseconds and ratios to the
driver. Usage::

    python benchmarks/bench_sensor_read.py [--n 100]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import statistics
import time
from collections.abc import Awaitable, Callable

from clawseed_edge.agent import AgentBuilder, SecurityPolicy
from clawseed_edge.api import DoneEvent, ToolCall, ToolContext
from clawseed_edge.peripherals.i2c.drivers.bme280 import BME280
from clawseed_edge.peripherals.i2c.sim import BME280Model, SimI2CBus
from clawseed_edge.testing import ScriptedProvider
from clawseed_edge.testing.sensors import sim_sensor_bank

WIRING = '[[sensors]]\nname = "greenhouse"\ndriver = "bme280"\n'


def _median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1e3


def bench_driver(n: int) -> float:
    bus = SimI2CBus(1)
    bus.attach(0x76, BME280Model(temperature=21.5))
    driver = BME280(bus, 0x76)
    driver.setup()
    samples = []
    for _ in range(n):
        t0 = time.perf_counter()
        values = driver.read()
        samples.append(time.perf_counter() - t0)
        assert values["temperature"] == 21.5
    return _median_ms(samples)


async def _timed(n: int, call: Callable[[], Awaitable[None]]) -> float:
    samples = []
    for _ in range(n):
        t0 = time.perf_counter()
        await call()
        samples.append(time.perf_counter() - t0)
    return _median_ms(samples)


async def bench_stack(n: int) -> dict[str, float]:
    bank = sim_sensor_bank(WIRING)
    ticks = itertools.count(0.0, 3600.0)
    bank._clock = lambda: next(ticks)  # every call is past the minimum interval: no cache hits
    await bank.connect()
    bank.sim.sensor("greenhouse").set(temperature=21.5)
    tool = next(t for t in bank.tools() if t.name == "sensor_read")
    ctx = ToolContext(channel="bench")
    provider = ScriptedProvider()
    agent = (
        AgentBuilder()
        .provider(provider)
        .peripherals([bank])
        .security_policy(SecurityPolicy(autonomy="full", max_actions_per_hour=None))
        .platform("bench")
        .option("clock", lambda: "")
        .build()
    )

    async def via_bank() -> None:
        reading = await bank.read("greenhouse")
        assert not reading.cached and reading.values["temperature"] == 21.5

    async def via_tool() -> None:
        result = await tool.execute({"sensor": "greenhouse"}, ctx)
        assert result.success and "21.5 °C" in result.output, result.error

    turns = itertools.count()

    async def via_turn() -> None:
        provider.add(ToolCall("sensor_read", {"sensor": "greenhouse"}), "It is 21.5 °C.")
        events = [e async for e in agent.turn("how warm is it?", session_id=f"s{next(turns)}")]
        assert isinstance(events[-1], DoneEvent)
        assert "21.5 °C" in provider.requests[-1].messages[-1].content

    try:
        return {
            "bank": await _timed(n, via_bank),
            "tool": await _timed(n, via_tool),
            "turn": await _timed(n, via_turn),
        }
    finally:
        await agent.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--n", type=int, default=100, help="samples per measurement")
    args = parser.parse_args()
    bench_driver(5)  # warm up imports
    base = bench_driver(args.n)
    stack = asyncio.run(bench_stack(args.n))
    print(f"samples per measurement: {args.n} (median, milliseconds; simulated BME280)")
    print(f"  BME280.read() driver, direct        {base:7.2f} ms   1.00x")
    for label, key in (
        ("SensorBank.read() (bus worker)", "bank"),
        ("sensor_read.execute()", "tool"),
        ("agent turn calling sensor_read", "turn"),
    ):
        print(f"  {label:<35} {stack[key]:7.2f} ms  {stack[key] / base:5.2f}x")


if __name__ == "__main__":
    main()

"""Latency of a GPIO tool call to the pin state change, on gpiozero mock pins.

Measures, in one run and on one MockFactory:

* baseline: gpiozero ``LED.on()`` / ``LED.off()`` called directly (what any gpiozero script pays);
* peripheral: ``PiGpio.switch()`` (rate window, worker-thread hop, the same gpiozero call);
* tool: ``gpio_switch.execute()`` (argument checks, the above, the result text), and
  ``describe_action()`` alone (what the SecurityPolicy asks before every call).

Each sample times one switch and checks that the mock pin changed. Reports medians in
microseconds and ratios to the baseline. Usage::

    python benchmarks/bench_pin_latency.py [--n 2000]

The lead extends this through the whole turn engine once it lands.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable

from clawseed_edge.api import ToolContext
from clawseed_edge.peripherals.gpio import PiGpio, loads_hardware_toml, mock_pin_factory

WIRING = '[[devices]]\nname = "red_led"\npin = "GPIO17"\nkind = "led"\n'


def _median_us(samples: list[float]) -> float:
    return statistics.median(samples) * 1e6


def bench_direct(n: int) -> float:
    from gpiozero import LED

    factory = mock_pin_factory()
    led = LED("GPIO22", pin_factory=factory)
    pin = factory.pin("GPIO22")
    samples = []
    for i in range(n):
        want = i % 2 == 0
        t0 = time.perf_counter()
        led.on() if want else led.off()
        t1 = time.perf_counter()
        assert pin.state == want
        samples.append(t1 - t0)
    led.close()
    factory.close()
    return _median_us(samples)


async def _bench_async(n: int, call: Callable[[bool], Awaitable[object]], pin: object) -> float:
    samples = []
    for i in range(n):
        want = i % 2 == 0
        t0 = time.perf_counter()
        await call(want)
        t1 = time.perf_counter()
        assert pin.state == want  # type: ignore[attr-defined]
        samples.append(t1 - t0)
    return _median_us(samples)


async def bench_stack(n: int) -> dict[str, float]:
    factory = mock_pin_factory()
    board = PiGpio(loads_hardware_toml(WIRING), pin_factory=factory)
    await board.connect()
    pin = factory.pin("GPIO17")
    tool = next(t for t in board.tools() if t.name == "gpio_switch")
    ctx = ToolContext(channel="bench")

    async def via_tool(on: bool) -> object:
        result = await tool.execute({"device": "red_led", "on": on}, ctx)
        assert result.success, result.error
        return result

    peripheral = await _bench_async(n, lambda on: board.switch("red_led", on), pin)
    via = await _bench_async(n, via_tool, pin)
    samples = []
    for i in range(n):
        t0 = time.perf_counter()
        tool.describe_action({"device": "red_led", "on": i % 2 == 0})
        samples.append(time.perf_counter() - t0)
    await board.disconnect()
    factory.close()
    return {"peripheral": peripheral, "tool": via, "describe_action": _median_us(samples)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000, help="samples per measurement")
    args = parser.parse_args()
    bench_direct(200)  # warm up imports and caches
    base = bench_direct(args.n)
    stack = asyncio.run(bench_stack(args.n))
    print(f"samples per measurement: {args.n} (median, microseconds)")
    print(f"  gpiozero LED.on()/off() direct     {base:8.1f} us   1.0x")
    for label, key in (
        ("PiGpio.switch() (worker thread)", "peripheral"),
        ("gpio_switch.execute()", "tool"),
        ("gpio_switch.describe_action()", "describe_action"),
    ):
        print(f"  {label:<34} {stack[key]:8.1f} us  {stack[key] / base:5.1f}x")


if __name__ == "__main__":
    main()

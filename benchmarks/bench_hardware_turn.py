"""Latency of a model's tool call to the pin state change, through the whole engine, on mock pins.

One process, one MockFactory whose pins note the ``time.perf_counter()`` of every state change
(a ``MockPWMPin`` subclass passed as ``pin_class``, so the moment is read where gpiozero changes
the pin, on whichever thread does it). Measured, as medians in microseconds:

* ``gpiozero LED.on()`` called directly: start -> pin change (the baseline any gpiozero script
  pays);
* ``gpio_switch.execute()`` called directly on a connected ``PiGpio``: start -> pin change
  (argument checks, rate window, the worker-thread hop);
* a whole turn, ``Agent.run()`` with a zero-latency ScriptedProvider answering one
  ``gpio_switch`` call then text, SecurityPolicy in ``full`` autonomy: start of the turn -> pin
  change, and start -> end of the turn;
* a plain-text turn (no tool) through the same agent, as the engine's own floor; "tool round"
  is the whole tool turn minus the plain turn (the second provider round trip, the policy, the
  call and its result message).

Every sample alternates on/off and checks the pin really changed. Rounds are interleaved (each
round runs every measurement) so that noise from other processes spreads over all of them; the
reported figure is the median of all samples, with the spread of the per-round medians.

Run: ``python benchmarks/bench_hardware_turn.py [--n 300] [--rounds 5]``
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

from gpiozero.pins.mock import MockFactory, MockPWMPin

from clawseed_edge.agent import Agent, AgentBuilder, SecurityPolicy
from clawseed_edge.api import ToolContext
from clawseed_edge.peripherals import PiGpio, loads_hardware_toml
from clawseed_edge.testing import ScriptedProvider

WIRING = '[[devices]]\nname = "red_led"\npin = "GPIO17"\nkind = "led"\n'


class TimedPin(MockPWMPin):  # type: ignore[misc]
    """A mock pin that notes when its state last changed (``perf_counter`` seconds)."""

    changed_at = 0.0

    def _change_state(self, value: Any) -> bool:
        changed: bool = super()._change_state(value)
        if changed:
            self.changed_at = time.perf_counter()
        return changed


Sample = tuple[float, float]  # (start -> pin change, start -> call returned), seconds


def direct_samples(n: int) -> list[Sample]:
    """gpiozero ``LED.on()/off()`` on its own pin of a fresh factory."""
    from gpiozero import LED

    factory = MockFactory(pin_class=TimedPin)
    led = LED("GPIO22", pin_factory=factory)
    pin = factory.pin("GPIO22")
    out: list[Sample] = []
    for i in range(n):
        want = i % 2 == 0
        t0 = time.perf_counter()
        led.on() if want else led.off()
        t1 = time.perf_counter()
        if pin.state != want:
            raise AssertionError("LED.on()/off() did not change the mock pin")
        out.append((pin.changed_at - t0, t1 - t0))
    led.close()
    factory.close()
    return out


async def timed(n: int, pin: TimedPin, step: Callable[[bool], Awaitable[object]]) -> list[Sample]:
    out: list[Sample] = []
    if pin.state:  # an odd n left it on: every sample must change the pin
        await step(False)
    for i in range(n):
        want = i % 2 == 0
        t0 = time.perf_counter()
        await step(want)
        t1 = time.perf_counter()
        if pin.state != want:
            raise AssertionError(f"the pin did not change (sample {i}, want {want})")
        if not t0 <= pin.changed_at <= t1:
            raise AssertionError("the pin changed outside the measured call")
        out.append((pin.changed_at - t0, t1 - t0))
    return out


class Stack:
    """A connected board, its gpio_switch tool and an agent over it."""

    def __init__(self) -> None:
        self.factory = MockFactory(pin_class=TimedPin)
        self.board = PiGpio(loads_hardware_toml(WIRING, "<bench>"), pin_factory=self.factory)
        self.provider = ScriptedProvider()
        policy = SecurityPolicy(autonomy="full", max_actions_per_hour=None)
        self.agent: Agent = (
            AgentBuilder()
            .provider(self.provider)
            .peripherals([self.board])
            .security_policy(policy)
            .platform("bench")
            .build()
        )
        self.pin: TimedPin = self.factory.pin("GPIO17")
        self.context = ToolContext(channel="bench")

    async def start(self) -> None:
        await self.board.connect()
        self.tool = next(t for t in self.board.tools() if t.name == "gpio_switch")

    async def stop(self) -> None:
        await self.board.disconnect()
        self.factory.close()

    async def execute(self, on: bool) -> None:
        result = await self.tool.execute({"device": "red_led", "on": on}, self.context)
        if not result.success:
            raise AssertionError(result.error)

    async def tool_turn(self, on: bool) -> None:
        self.provider.add(ScriptedProvider.call("gpio_switch", device="red_led", on=on), "Done.")
        await self._turn("switch the red LED")

    async def plain_turn(self, on: bool) -> None:
        self.provider.add("Hello.")
        await self._turn("hello")

    async def _turn(self, text: str) -> None:
        self.agent.reset()  # the same history length every turn
        self.provider.requests.clear()
        await self.agent.run(text)


async def plain_samples(stack: Stack, n: int) -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        await stack.plain_turn(True)
        out.append(time.perf_counter() - t0)
    return out


def us(values: list[float]) -> float:
    return statistics.median(values) * 1e6


async def measure(n: int, rounds: int) -> dict[str, list[list[float]]]:
    stack = Stack()
    await stack.start()
    keys = ("direct", "execute", "execute_ret", "turn_pin", "turn", "plain")
    per_round: dict[str, list[list[float]]] = {k: [] for k in keys}
    try:
        # Warm up imports, the prompt cache and the worker thread.
        direct_samples(50)
        await timed(50, stack.pin, stack.execute)
        await timed(50, stack.pin, stack.tool_turn)
        await plain_samples(stack, 50)
        for _ in range(rounds):
            direct = direct_samples(n)
            execute = await timed(n, stack.pin, stack.execute)
            turn = await timed(n, stack.pin, stack.tool_turn)
            plain = await plain_samples(stack, n)
            per_round["direct"].append([s[0] for s in direct])
            per_round["execute"].append([s[0] for s in execute])
            per_round["execute_ret"].append([s[1] for s in execute])
            per_round["turn_pin"].append([s[0] for s in turn])
            per_round["turn"].append([s[1] for s in turn])
            per_round["plain"].append(plain)
    finally:
        await stack.stop()
    return per_round


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--n", type=int, default=300, help="samples per measurement per round")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds")
    args = parser.parse_args()
    data = asyncio.run(measure(args.n, args.rounds))

    def row(key: str) -> tuple[float, float, float]:
        rounds = [us(r) for r in data[key]]
        return us([x for r in data[key] for x in r]), min(rounds), max(rounds)

    base, _, _ = row("direct")
    exe, _, _ = row("execute")
    plain, _, _ = row("plain")
    turn, _, _ = row("turn")
    print(
        f"median microseconds over {args.rounds} rounds x {args.n} samples "
        "(spread = min..max of the round medians)"
    )
    print(f"  {'measurement':<46} {'median':>9} {'spread':>17} {'/LED.on':>8} {'/execute':>9}")
    lines = [
        ("gpiozero LED.on()/off() -> pin change", "direct"),
        ("gpio_switch.execute() -> pin change", "execute"),
        ("gpio_switch.execute() returned", "execute_ret"),
        ("whole turn: start -> pin change", "turn_pin"),
        ("whole turn with one gpio_switch call", "turn"),
        ("plain-text turn (no tool)", "plain"),
    ]
    for label, key in lines:
        median, lo, hi = row(key)
        print(
            f"  {label:<46} {median:9.1f} {lo:8.1f}..{hi:<8.1f} {median / base:7.1f}x "
            f"{median / exe:8.2f}x"
        )
    print(f"  {'tool round (tool turn - plain turn)':<46} {turn - plain:9.1f}")


if __name__ == "__main__":
    main()

"""Rules on stale data: a sensor that stops answering (or gives nothing new) is unknown, and an
active rule runs its ``then`` (the safe side) within its grace period; ``on_unknown = "hold"``
keeps it. Driven by the sampler's and the runner's manual clock: no sleeps, no wall clock."""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
import pytest

from clawseed_edge.agent import AgentBuilder, SecurityPolicy
from clawseed_edge.agent.approval import CallbackApprover
from clawseed_edge.api import (
    ESTOP_LATCHED,
    ApprovalRequest,
    EstopLatch,
    SensorReading,
)
from clawseed_edge.config.automations import AutomationConfig
from clawseed_edge.scheduler.automations import Automations, validate_automations
from clawseed_edge.service.sampler import SensorSampler
from clawseed_edge.testing import ScriptedProvider
from clawseed_edge.testing.sensors import sim_sensor_bank

from .test_automations import FanTool

T0 = 1_790_000_000.0
GREENHOUSE = """
[[sensors]]
name = "greenhouse"
driver = "bme280"
address = 0x76
update_interval = "10s"
"""
RULE = {
    "name": "frost",
    "when": "greenhouse.temperature < 3",
    "until": "greenhouse.temperature > 6",
    "do": {"tool": "fan_switch", "arguments": {"on": True}},
    "then": {"tool": "fan_switch", "arguments": {"on": False}},
    "unknown_grace": "30s",
}


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


def runner(
    rule: dict[str, Any], policy: SecurityPolicy | None = None
) -> tuple[Automations, FanTool]:
    fan = FanTool()
    agent = (
        AgentBuilder()
        .provider(ScriptedProvider([]))
        .tools([fan])
        .security_policy(policy or SecurityPolicy(autonomy="full", max_actions_per_hour=None))
        .platform("test")
        .build()
    )
    config = msgspec.convert([rule], list[AutomationConfig])
    return Automations(agent, validate_automations(config), clock=lambda: T0), fan


async def pass_at(t: float, clock: Clock, sampler: SensorSampler, auto: Automations) -> list[Any]:
    clock.now = t
    await sampler.step(t)
    return await auto.evaluate(t)


@pytest.mark.parametrize("on_unknown", ["then", "hold"])
async def test_a_sensor_that_stops_answering_runs_then_within_the_grace_period(
    on_unknown: str,
) -> None:
    clock = Clock()
    bank = sim_sensor_bank(GREENHOUSE, clock=clock)
    async with bank:
        sampler = SensorSampler(bank, clock=clock)
        auto, fan = runner({**RULE, "on_unknown": on_unknown})
        sampler.states.subscribe(auto.observe)
        bank.sim.sensor("greenhouse").set(temperature=1.0)
        (fired,) = await pass_at(T0, clock, sampler, auto)
        assert fired["event"] == "fire" and fan.calls == [True]
        bank.sim.buses[1].detach(0x76)  # the thermometer stops answering
        assert await pass_at(T0 + 10, clock, sampler, auto) == []  # unknown: the grace starts
        assert auto.deadline() == (T0 + 40 if on_unknown == "then" else None)
        assert await pass_at(T0 + 30, clock, sampler, auto) == []
        done = await pass_at(T0 + 40, clock, sampler, auto)
        if on_unknown == "hold":
            assert done == [] and fan.calls == [True]  # held until the value comes back
            return
        (reset,) = done
    assert reset["event"] == "reset" and reset["unknown"] and reset["ok"]
    assert fan.calls == [True, False]  # the safe side ran, once


async def test_a_sensor_with_no_new_reading_goes_stale_after_three_intervals() -> None:
    readings: list[SensorReading] = []
    clock = Clock()
    bank = sim_sensor_bank(GREENHOUSE.replace('"10s"', '"10s"\nmin_interval_s = 3600'), clock=clock)
    async with bank:
        sampler = SensorSampler(bank, clock=clock)
        sampler.states.subscribe(readings.append)  # type: ignore[arg-type]
        for t in (0, 10, 20, 30):  # each read inside min_interval_s: cached, nothing new
            clock.now = T0 + t
            await sampler.step(T0 + t)
        assert all(r.ok for r in readings)
        clock.now = T0 + 40
        await sampler.step(T0 + 40)  # 40 s > 3 x 10 s without a new reading
    assert not readings[-1].ok and "stale after 30 s" in readings[-1].error
    assert sum(not r.ok for r in readings) == 1  # said once, not at every pass


async def test_a_call_waiting_for_approval_is_cancelled_by_an_estop_and_blocks_no_rule() -> None:
    asked = asyncio.Event()

    async def never(request: ApprovalRequest) -> bool:
        asked.set()
        await asyncio.Event().wait()  # nobody answers
        return True

    latch = EstopLatch()
    policy = SecurityPolicy(
        autonomy="supervised",
        approver=CallbackApprover(never),
        latch=latch,
        max_actions_per_hour=None,
    )
    rules = [RULE, {**RULE, "name": "note", "do": {"message": "cold"}, "then": None}]
    fan = FanTool()
    agent = (
        AgentBuilder()
        .provider(ScriptedProvider([]))
        .tools([fan])
        .security_policy(policy)
        .platform("test")
        .build()
    )
    auto = Automations(
        agent,
        validate_automations(msgspec.convert(rules, list[AutomationConfig])),
        clock=lambda: T0,
    )
    auto.observe(SensorReading("sampler", "greenhouse", {"temperature": 1.0}, {}, T0))
    first = await auto.evaluate(T0, wait=False)
    await asyncio.wait_for(asked.wait(), 5)
    # The fan's call waits for a person; the other rule fired and was recorded meanwhile.
    assert [f["automation"] for f in auto.firings] == ["note"]
    assert first[0] == {"automation": "frost", "running": True}
    latch.engage("estop in a test")
    auto.pause("estop in a test", ESTOP_LATCHED)
    await auto.drain()
    (cancelled,) = [f for f in auto.firings if f["automation"] == "frost"]
    assert not cancelled["ok"] and cancelled["code"] == ESTOP_LATCHED
    assert fan.calls == []  # never ran, and an answer now would find nobody waiting

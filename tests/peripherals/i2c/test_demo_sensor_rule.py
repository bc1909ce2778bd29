"""The offline demo model answers a temperature question from a (simulated) sensor."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable

from clawseed_edge.agent import AgentBuilder, SecurityPolicy
from clawseed_edge.api import ChatMessage, ChatRequest, ToolSpec
from clawseed_edge.peripherals.sensors.bank import SensorBank
from clawseed_edge.providers.demo import DemoProvider

SimI2C = Callable[..., Awaitable[SensorBank]]


def spec(sensors: list[str]) -> ToolSpec:
    return ToolSpec(
        "sensor_read",
        "read",
        {"type": "object", "properties": {"sensor": {"type": "string", "enum": sensors}}},
    )


async def plan(text: str, tools: list[ToolSpec]) -> tuple[str, dict[str, object]] | str:
    response = await DemoProvider().chat(
        ChatRequest(messages=(ChatMessage.user(text),), tools=tuple(tools))
    )
    if response.tool_calls:
        call = response.tool_calls[0]
        return call.name, dict(call.arguments)
    return response.text


async def test_a_named_sensor_is_read_and_otherwise_the_first() -> None:
    tools = [spec(["greenhouse", "porch"])]
    assert await plan("how warm is it?", tools) == ("sensor_read", {"sensor": "greenhouse"})
    assert await plan("humidity on the porch", tools) == ("sensor_read", {"sensor": "porch"})
    assert isinstance(await plan("tell me a joke", tools), str)
    assert isinstance(await plan("how warm is it?", []), str)


async def test_how_warm_is_it_answers_with_a_number_and_a_unit(sim_i2c: SimI2C) -> None:
    bank = await sim_i2c('[[sensors]]\nname = "greenhouse"\ndriver = "bme280"\n')
    bank.sim.sensor("greenhouse").set(temperature=23.4)
    agent = (
        AgentBuilder()
        .provider(DemoProvider())
        .peripherals([bank])
        .security_policy(SecurityPolicy(autonomy="full", max_actions_per_hour=None))
        .platform("test")
        .build()
    )
    try:
        answer = await agent.run("how warm is it?")
    finally:
        await agent.aclose()
    assert re.search(r"temperature 23\.4 °C", answer), answer

"""Each driver against its simulated model through a full agent turn: scripted model ->
engine -> SecurityPolicy -> sensor tool -> driver -> simulated chip, and back with a unit."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest

from clawseed_edge.agent import AgentBuilder, SecurityPolicy, StaticApprover
from clawseed_edge.api import ChatRequest, DoneEvent, ToolCall
from clawseed_edge.peripherals.sensors.bank import SensorBank
from clawseed_edge.testing import ScriptedProvider

SimI2C = Callable[..., Awaitable[SensorBank]]

WIRING = """
[[sensors]]
name = "greenhouse"
driver = "bme280"

[[sensors]]
name = "porch"
driver = "sht31"

[[sensors]]
name = "desk"
driver = "bh1750"

[[sensors]]
name = "soil_probe"
driver = "ads1115"

[[sensors]]
name = "pond"
driver = "ds18b20"

[[sensors]]
name = "shed"
driver = "dht22"

[[displays]]
name = "lcd"
driver = "hd44780"
"""


def tool_text(request: ChatRequest) -> str:
    message = request.messages[-1]
    assert message.role == "tool"
    return message.content


async def turn(
    bank: SensorBank,
    call: ToolCall,
    answer: str,
    autonomy: str = "full",
    approver: StaticApprover | None = None,
) -> str:
    """Run one turn in which the model makes ``call`` then answers; returns the tool result
    the model was sent."""
    provider = ScriptedProvider([call, ScriptedProvider.text(answer)])
    agent = (
        AgentBuilder()
        .provider(provider)
        .peripherals([bank])
        .security_policy(
            SecurityPolicy(autonomy=autonomy, approver=approver, max_actions_per_hour=None)
        )
        .platform("test")
        .option("clock", lambda: "")
        .build()
    )
    try:
        events = [e async for e in agent.turn("question")]
    finally:
        await agent.aclose()
    assert isinstance(events[-1], DoneEvent) and events[-1].text == answer
    return tool_text(provider.requests[1])


@pytest.mark.parametrize(
    ("sensor", "setting", "expected"),
    [
        (
            "greenhouse",
            {"temperature": 21.5, "humidity": 40},
            "temperature 21.5 °C, humidity 40.0 %RH",
        ),
        ("porch", {"temperature": -3.2, "humidity": 88}, "temperature -3.2 °C, humidity 88.0 %RH"),
        ("desk", {"illuminance": 420}, "illuminance 420 lx"),
        ("soil_probe", {"ain2": 2.5}, "ain2 2.5000 V"),
        ("pond", {"temperature": 9.25}, "temperature 9.25 °C"),
        ("shed", {"temperature": 4.1, "humidity": 93.5}, "temperature 4.1 °C, humidity 93.5 %RH"),
    ],
)
async def test_each_driver_answers_through_a_turn(
    sim_i2c: SimI2C, sensor: str, setting: dict[str, float], expected: str
) -> None:
    bank = await sim_i2c(WIRING)
    bank.sim.sensor(sensor).set(**setting)
    result = await turn(bank, ToolCall("sensor_read", {"sensor": sensor}), "done")
    assert result.startswith(f"{sensor}: ")
    assert expected in result


async def test_sensor_read_is_a_read_even_in_read_only_mode(sim_i2c: SimI2C) -> None:
    bank = await sim_i2c(WIRING)
    result = await turn(
        bank, ToolCall("sensor_read", {"sensor": "greenhouse"}), "ok", autonomy="read_only"
    )
    assert "temperature 21.0 °C" in result


async def test_display_show_through_a_turn(sim_i2c: SimI2C) -> None:
    bank = await sim_i2c(WIRING)
    result = await turn(bank, ToolCall("display_show", {"text": "pond 9.3°C"}), "shown")
    assert result == "lcd shows: pond 9.3°C"
    assert bank.sim.sensor("lcd").text == "pond 9.3°C"


async def test_raw_write_is_refused_in_read_only_mode(sim_i2c: SimI2C) -> None:
    bank = await sim_i2c(WIRING + "\n[i2c]\nraw_access = true\n")
    model = bank.sim.sensor("greenhouse")
    before = bytes(model.registers)
    call = ToolCall("i2c_write_register", {"address": 0x76, "register": 0xF5, "data": [0xE0]})
    result = await turn(bank, call, "no", autonomy="read_only")
    assert "'i2c_write_register' writes device 'i2c-1@0x76' and autonomy is read_only" in result
    assert bytes(model.registers) == before


async def test_a_sensor_fault_reaches_the_model_as_a_clear_error(sim_i2c: SimI2C) -> None:
    bank = await sim_i2c(WIRING)
    bank.sim.bus(1).detach(0x76)
    result = await turn(bank, ToolCall("sensor_read", {"sensor": "greenhouse"}), "sorry")
    assert result.startswith("Error: reading greenhouse (bme280): no device answered at 0x76")


@pytest.mark.parametrize("approve", [False, True])
async def test_raw_write_asks_for_approval_in_supervised_mode(
    sim_i2c: SimI2C, approve: bool
) -> None:
    bank = await sim_i2c(WIRING + "\n[i2c]\nraw_access = true\n")
    model = bank.sim.sensor("greenhouse")
    approver = StaticApprover(approve)
    call = ToolCall("i2c_write_register", {"address": 0x76, "register": 0xF5, "data": [0xA0]})
    result = await turn(bank, call, "ok", autonomy="supervised", approver=approver)
    (request,) = approver.requests
    assert "write a0 to register 0xf5 of 0x76 on bus 1" in str(request)
    assert model.registers[0xF5] == (0xA0 if approve else 0x00)
    assert result.startswith("wrote 1 bytes") == approve

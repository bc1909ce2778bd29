"""Automations: the safe expression language, for/until hysteresis, actions through the
SecurityPolicy, the emergency stop's pause; a fake clock, no sleeps."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec
import pytest

from clawseed_edge.agent import AgentBuilder, SecurityPolicy
from clawseed_edge.api import (
    BaseTool,
    ConfigInvalid,
    RiskClass,
    SensorReading,
    ToolContext,
    ToolResult,
)
from clawseed_edge.scheduler.automations import (
    AutomationConfig,
    Automations,
    validate_automations,
)
from clawseed_edge.scheduler.rules import ExpressionInvalid, parse_condition
from clawseed_edge.testing import ScriptedProvider

# --- the expression language ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "values", "holds"),
    [
        ("g.temperature > 30", {"g.temperature": 30.5}, True),
        ("g.temperature > 30", {"g.temperature": 30.0}, False),
        ("g.temperature >= 30 and g.humidity < 50", {"g.temperature": 31, "g.humidity": 60}, False),
        ("g.temperature >= 30 or g.humidity < 50", {"g.temperature": 1, "g.humidity": 40}, True),
        ("not (g.temperature > 30)", {"g.temperature": 20}, True),
        ("g.temperature > p.temperature", {"g.temperature": 21, "p.temperature": 20}, True),
        ("g.temperature != -1.5", {"g.temperature": -1.5}, False),
        ("g.temperature > 30", {}, False),  # not known yet: no comparison holds
        ("not g.temperature > 30", {}, True),
    ],
)
def test_conditions(text: str, values: dict[str, float], holds: bool) -> None:
    assert parse_condition(text).holds(values.get) is holds


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("__import__('os').system('rm -rf /')", "cannot read"),
        ("g.temperature > ", "ends too early"),
        ("temperature > 30", "SENSOR.QUANTITY"),
        ("g.temperature 30", "expected a comparison"),
        ("(g.t > 1", "ends too early"),
        ("g.t > 1 g.t", "unexpected"),
        ("x" * 301, "longer than 300"),
        (" or ".join(["g.t > 1"] * 17), "more than 16 comparisons"),
        ("(" * 10 + "g.t > 1" + ")" * 10, "deeper than 8"),
    ],
)
def test_bad_conditions_say_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(ExpressionInvalid, match=message):
        parse_condition(text)


# --- the runner -----------------------------------------------------------------------------


class FanTool(BaseTool):
    """A relay-like tool (risk act): records what it was asked."""

    name = "fan_switch"
    description = "switch the fan"
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {"on": {"type": "boolean"}},
        "required": ["on"],
        "additionalProperties": False,
    }
    risk = RiskClass.ACT

    def __init__(self) -> None:
        self.calls: list[bool] = []

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        self.calls.append(bool(arguments["on"]))
        return ToolResult.ok(f"fan {'on' if arguments['on'] else 'off'}")


RULE = {
    "name": "too_hot",
    "when": "greenhouse.temperature > 30",
    "for": "2m",
    "do": {"tool": "fan_switch", "arguments": {"on": True}},
    "until": "greenhouse.temperature < 28",
    "then": {"tool": "fan_switch", "arguments": {"on": False}},
    "notify": ["phones"],
}


def make(
    autonomy: str = "full", rule: dict[str, Any] | None = None
) -> tuple[Automations, FanTool, list[Any]]:
    fan = FanTool()
    agent = (
        AgentBuilder()
        .provider(ScriptedProvider([]))
        .tools([fan])
        .security_policy(SecurityPolicy(autonomy=autonomy, max_actions_per_hour=None))
        .platform("test")
        .build()
    )
    config = msgspec.convert([rule or RULE], list[AutomationConfig])
    published: list[Any] = []
    return (
        Automations(
            agent, validate_automations(config), clock=lambda: 0.0, publish=published.append
        ),
        fan,
        published,
    )


def feed(automations: Automations, value: float, t: float) -> None:
    automations.observe(SensorReading("sampler", "greenhouse", {"temperature": value}, {}, t))


async def test_fires_when_held_past_for_and_resets_by_until() -> None:
    auto, fan, published = make()
    feed(auto, 31.0, 0)
    assert await auto.evaluate(0) == []
    assert auto.deadline() == 120
    feed(auto, 32.0, 60)
    assert await auto.evaluate(60) == []
    (fired,) = await auto.evaluate(120)  # held 2 min: fires, once
    assert fired["event"] == "fire" and fired["ok"] and fan.calls == [True]
    feed(auto, 29.0, 180)  # below `when`, above `until`: still on (hysteresis)
    assert await auto.evaluate(180) == [] and await auto.evaluate(600) == []
    feed(auto, 27.5, 700)
    (reset,) = await auto.evaluate(700)
    assert reset["event"] == "reset" and fan.calls == [True, False]
    assert [f["event"] for f in auto.firings] == ["fire", "reset"]
    assert published[0]["type"] == "notification" and published[0]["automation"] == "too_hot"


async def test_a_spike_shorter_than_for_does_not_fire() -> None:
    auto, fan, _ = make()
    feed(auto, 35.0, 0)
    await auto.evaluate(0)
    feed(auto, 25.0, 90)  # back down before 2 min
    await auto.evaluate(90)
    feed(auto, 35.0, 100)
    assert await auto.evaluate(200) == []  # held 100 s since it came back: not yet
    assert fan.calls == []


async def test_read_only_refuses_the_action_and_records_why() -> None:
    auto, fan, _ = make(autonomy="read_only")
    feed(auto, 31.0, 0)
    await auto.evaluate(0)
    (fired,) = await auto.evaluate(120)
    assert fan.calls == []
    assert fired["ok"] is False and "read_only" in fired["error"]


async def test_the_emergency_stop_pauses_until_resumed() -> None:
    auto, fan, _ = make()
    feed(auto, 31.0, 0)
    await auto.evaluate(0)
    auto.pause("estop from phone")
    assert await auto.evaluate(200) == [] and fan.calls == []
    assert auto.resume() is True
    feed(auto, 31.0, 300)
    assert await auto.evaluate(300) == []  # held from scratch after the pause
    assert len(await auto.evaluate(420)) == 1 and fan.calls == [True]


async def test_without_until_it_resets_when_when_stops_holding() -> None:
    rule = {k: v for k, v in RULE.items() if k != "until"} | {"for": 0}
    auto, fan, _ = make(rule=rule)
    feed(auto, 31.0, 0)
    assert len(await auto.evaluate(0)) == 1
    feed(auto, 30.0, 10)
    assert len(await auto.evaluate(10)) == 1 and fan.calls == [True, False]


def test_config_errors_name_the_key() -> None:
    bad = msgspec.convert([RULE | {"when": "greenhouse.temperature >"}], list[AutomationConfig])
    with pytest.raises(
        ConfigInvalid, match=r"cfg: automations\[0\]\.when: 'too_hot': .*ends too early"
    ):
        validate_automations(bad, "cfg")
    bad = msgspec.convert([RULE | {"for": "soon"}], list[AutomationConfig])
    with pytest.raises(ConfigInvalid, match=r"automations\[0\]\.for"):
        validate_automations(bad)
    bad = msgspec.convert([RULE | {"do": {"tool_name": "x"}}], list[AutomationConfig])
    with pytest.raises(ConfigInvalid, match=r"automations\[0\]\.do"):
        validate_automations(bad)

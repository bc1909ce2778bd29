"""The local-intent stage on its own: languages as data, history questions, turning it off."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest

from clawseed_edge.agent import AgentBuilder, StaticApprover
from clawseed_edge.agent.intents import DeviceWords, LocalIntents, SensorWords
from clawseed_edge.api import ToolCall, ToolSpec
from clawseed_edge.providers import demo_lang
from clawseed_edge.testing import ScriptedProvider

pytestmark = pytest.mark.local_intents  # the stage as configured by default

DEVICE = {"type": "string", "enum": ["red_led", "lamp", "fan", "door"]}
TOOLS = (
    ToolSpec(
        "gpio_switch",
        "switch",
        {
            "type": "object",
            "properties": {"device": DEVICE, "on": {"type": "boolean"}},
            "required": ["device", "on"],
        },
    ),
    ToolSpec("gpio_read", "read", {"type": "object", "properties": {"device": DEVICE}}),
    ToolSpec(
        "sensor_read",
        "read a sensor",
        {"type": "object", "properties": {"sensor": {"type": "string", "enum": ["greenhouse"]}}},
    ),
    ToolSpec(
        "sensor_history",
        "history",
        {"type": "object", "properties": {"sensor": {"type": "string"}}},
    ),
)
STAGE = LocalIntents(
    [DeviceWords("red_led", "led"), DeviceWords("lamp", "pwm_led"), DeviceWords("fan", "relay")],
    [SensorWords.for_driver("greenhouse", "bme280")],
)
REQUIRED_KEYS = {"language", "phrases", "deferred", "hedged", "negation", "question_starts"}


def vocab_files() -> list[str]:
    folder = resources.files("clawseed_edge.providers").joinpath("demo_vocab")
    return sorted(e.name for e in folder.iterdir() if e.name.endswith(".json"))


@pytest.mark.parametrize("name", vocab_files())
def test_each_language_file_has_the_keys_and_is_loaded(name: str) -> None:
    folder = resources.files("clawseed_edge.providers").joinpath("demo_vocab")
    data = json.loads(folder.joinpath(name).read_text("utf-8"))
    assert REQUIRED_KEYS <= set(data)
    assert data["language"] == name.removesuffix(".json")
    assert data["language"] in {v.code for v in demo_lang.languages()}


def test_english_and_chinese_are_both_there() -> None:
    assert {"en", "zh"} <= {v.code for v in demo_lang.languages()}


@pytest.mark.parametrize(
    ("text", "window", "quantity"),
    [
        ("how cold was it overnight?", "last night", "temperature"),
        ("what was the highest temperature today", "today", "temperature"),
        ("how humid was the greenhouse yesterday?", "yesterday", "humidity"),
        ("温室昨晚最低温度", "last night", "temperature"),
    ],
)
def test_history_questions_go_to_sensor_history(text: str, window: str, quantity: str) -> None:
    assert STAGE.plan(text, TOOLS) == (
        ToolCall(
            "sensor_history", {"sensor": "greenhouse", "window": window, "quantity": quantity}
        ),
    )


def test_a_history_question_without_the_history_tool_goes_to_the_model() -> None:
    tools = tuple(t for t in TOOLS if t.name != "sensor_history")
    assert STAGE.plan("how cold was it overnight?", tools) == ()


def test_light_is_a_device_kind_before_a_sensor_quantity() -> None:
    # the issue: "turn on the red light" read the light sensor and said "Done."
    assert STAGE.plan("turn on the red light", TOOLS) == (
        ToolCall("gpio_switch", {"device": "red_led", "on": True}),
    )
    # two lights: which one is not known, so the model decides (and never a sensor read)
    assert STAGE.plan("turn on the light", TOOLS) == ()


def test_a_device_the_tools_do_not_offer_is_not_switched() -> None:
    tools = tuple(t for t in TOOLS if t.name != "gpio_switch")
    assert STAGE.plan("turn on the fan", tools) == ()


async def test_turned_off_every_message_goes_to_the_model(tmp_path: Path) -> None:
    provider = ScriptedProvider(["the model answered"])
    agent = (
        AgentBuilder()
        .provider(provider)
        .approver(StaticApprover(True))
        .option("local_intents", None)
        .build()
    )
    async with agent:
        assert await agent.run("status") == "the model answered"
    assert len(provider.requests) == 1


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("turn the fan on when it gets above 30 degrees", "when"),
        ("turn the red led on at midnight", "at midnight"),
        ("if the door opens turn on the red led", "if"),
    ],
)
async def test_the_demo_model_proposes_an_automation_instead_of_acting(
    text: str, words: str
) -> None:
    from clawseed_edge.api import ChatMessage, ChatRequest
    from clawseed_edge.providers.demo import DemoProvider

    response = await DemoProvider().chat(ChatRequest((ChatMessage.user(text),), TOOLS))
    assert response.tool_calls == ()
    assert f"{words!r}" in response.text and "automation" in response.text

"""DemoProvider: deterministic rules that turn a few phrasings into tool calls."""

from __future__ import annotations

import pytest

from clawseed_edge.api import (
    ChatMessage,
    ChatRequest,
    StopReason,
    StreamDone,
    ToolCallReady,
    ToolSpec,
)
from clawseed_edge.providers.demo import DemoProvider
from clawseed_edge.providers.demo_plan import MAX_CALLS, MAX_CLAUSES, plan_sentence

DEVICES = {"type": "string", "enum": ["red_led", "fan"]}
TOOLS = (
    ToolSpec(
        "gpio_switch",
        "switch",
        {
            "type": "object",
            "properties": {"device": DEVICES, "on": {"type": "boolean"}},
            "required": ["device", "on"],
        },
    ),
    ToolSpec(
        "gpio_set_level",
        "level",
        {
            "type": "object",
            "properties": {
                "device": {"type": "string", "enum": ["lamp"]},
                "level": {"type": "number"},
            },
            "required": ["device", "level"],
        },
    ),
    ToolSpec(
        "gpio_read",
        "read",
        {
            "type": "object",
            "properties": {"device": {"type": "string", "enum": ["door"]}},
            "required": ["device"],
        },
    ),
    ToolSpec("hardware_status", "status", {"type": "object", "properties": {}}),
)


def request(text: str, *extra: ChatMessage) -> ChatRequest:
    return ChatRequest((ChatMessage.system("s"), ChatMessage.user(text), *extra), TOOLS)


async def test_switch_on_by_spoken_device_name() -> None:
    response = await DemoProvider().chat(
        request("[2026-11-29 10:00:00 UTC] Turn on the red led please")
    )
    assert response.stop_reason is StopReason.TOOL_USE
    (call,) = response.tool_calls
    assert (call.name, dict(call.arguments)) == ("gpio_switch", {"device": "red_led", "on": True})
    assert call.id == "demo_1"


async def test_switch_off_and_percent_and_read_and_status() -> None:
    demo = DemoProvider()
    off = (await demo.chat(request("switch fan off"))).tool_calls[0]
    assert dict(off.arguments) == {"device": "fan", "on": False}
    dim = (await demo.chat(request("dim the lamp to 30%"))).tool_calls[0]
    assert (dim.name, dict(dim.arguments)) == ("gpio_set_level", {"device": "lamp", "level": 0.3})
    read = (await demo.chat(request("is the door open?"))).tool_calls[0]
    assert (read.name, dict(read.arguments)) == ("gpio_read", {"device": "door"})
    status = (await demo.chat(request("status"))).tool_calls[0]
    assert status.name == "hardware_status"


async def test_unknown_request_gets_help_listing_devices() -> None:
    response = await DemoProvider().chat(request("write me a poem"))
    assert not response.tool_calls
    assert "offline demo model" in response.text and "red_led" in response.text


async def test_tool_results_are_summarised() -> None:
    call_msg = ChatMessage.assistant("", ())
    response = await DemoProvider().chat(
        request("turn on red led", call_msg, ChatMessage.tool("demo_1", "red_led is on"))
    )
    assert response.text == "Done. red_led is on."
    assert response.stop_reason is StopReason.END_TURN


async def test_stream_ends_with_done() -> None:
    events = [e async for e in DemoProvider().stream(request("turn on red_led"))]
    assert isinstance(events[0], ToolCallReady) and isinstance(events[-1], StreamDone)


def recalled(previous: str, latest: str) -> str:
    """A user message as the engine builds it: recalled memory, time prefix, the user's text."""
    memory = f"[Memory]\n- daily/2026-11-29/cli/abcd1234: User: {previous}\nAssistant: Done.\n\n"
    return memory + "[2026-11-29 10:00:00 UTC] " + latest


async def test_recalled_memory_does_not_pick_the_device() -> None:
    # "the lamp" has no switch tool; the red LED named only in recalled memory must not switch
    response = await DemoProvider().chat(
        request(recalled("turn on the red led", "turn on the lamp"))
    )
    assert all(c.arguments.get("device") != "red_led" for c in response.tool_calls)
    assert response.tool_calls == ()


async def test_recalled_memory_does_not_pick_the_verb() -> None:
    # an earlier help answer mentioned 'status'; the latest command must still be a switch
    text = recalled("hello", "turn off the fan").replace("Done.", "try 'status'")
    (call,) = (await DemoProvider().chat(request(text))).tool_calls
    assert (call.name, call.arguments) == ("gpio_switch", {"device": "fan", "on": False})


async def test_text_without_time_prefix_is_read_whole() -> None:
    (call,) = (await DemoProvider().chat(request("turn on the fan"))).tool_calls
    assert call.arguments == {"device": "fan", "on": True}


def planned(text: str) -> list[tuple[str, dict[str, object]]]:
    return [(c.name, dict(c.arguments)) for c in plan_sentence(text, TOOLS).calls]


def switch(device: str, on: bool) -> tuple[str, dict[str, object]]:
    return ("gpio_switch", {"device": device, "on": on})


@pytest.mark.parametrize(
    ("text", "calls"),
    [
        (
            "turn off the red led and turn on the fan",
            [switch("red_led", False), switch("fan", True)],
        ),
        (
            "Turn ON the fan, then turn OFF the red LED.",
            [switch("fan", True), switch("red_led", False)],
        ),
        ("red led on and fan off", [switch("red_led", True), switch("fan", False)]),
        ("switch the fan off & the red led on", [switch("fan", False), switch("red_led", True)]),
        ("turn off the red led and the fan", [switch("red_led", False), switch("fan", False)]),
        ("red led and fan on", [switch("red_led", True), switch("fan", True)]),
        ("turn off the red led on the desk", [switch("red_led", False)]),
        (
            "dim the lamp to 30% and switch off the fan",
            [("gpio_set_level", {"device": "lamp", "level": 0.3}), switch("fan", False)],
        ),
        ("is the door open or not?", [("gpio_read", {"device": "door"})]),
        ("turn on the red led and the red led", [switch("red_led", True)]),
    ],
)
def test_compound_phrasings_give_each_device_its_own_value(
    text: str, calls: list[tuple[str, dict[str, object]]]
) -> None:
    assert planned(text) == calls


def test_except_and_but_never_lend_a_verb_to_what_follows() -> None:
    assert planned("turn on the fan except the red led") == [switch("fan", True)]
    assert planned("switch off the fan, other than the red led") == [switch("fan", False)]
    plan = plan_sentence("turn off the fan but the red led", TOOLS)
    assert [(c.name, dict(c.arguments)) for c in plan.calls] == [switch("fan", False)]
    assert plan.skipped == ["red_led: say what to do"]
    assert planned("turn on the fan but the red led off") == [
        switch("fan", True),
        switch("red_led", False),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "don't turn on the red led",
        "Don\u2019t switch the fan off",
        "do not turn the fan on",
        "never turn on the red led",
        "the fan should not be on",
    ],
)
def test_negations_make_no_call_and_say_so(text: str) -> None:
    plan = plan_sentence(text, TOOLS)
    assert plan.calls == []
    assert plan.skipped and "as it is (as you asked)" in plan.skipped[0]


async def test_negation_only_answers_with_what_was_left() -> None:
    response = await DemoProvider().chat(request("don't turn on the red led"))
    assert response.tool_calls == ()
    assert response.text == (
        "Skipped: left red_led as it is (as you asked). Devices: door, fan, lamp, red_led."
    )


async def test_a_request_naming_no_device_lists_the_devices() -> None:
    response = await DemoProvider().chat(request("turn on the kitchen light"))
    assert response.tool_calls == ()
    assert response.text == (
        "Skipped: 'turn on the kitchen light': it names no device I know. "
        "Devices: door, fan, lamp, red_led."
    )


def test_a_device_without_on_or_off_is_skipped_not_guessed() -> None:
    plan = plan_sentence("turn the red led and switch on the fan", TOOLS)
    assert [(c.name, dict(c.arguments)) for c in plan.calls] == [switch("fan", True)]
    assert plan.skipped == ["red_led: say 'on' or 'off'"]


def test_calls_and_clauses_are_bounded() -> None:
    many = ", ".join(["turn on the red led, turn off the red led"] * 40)
    plan = plan_sentence(many, TOOLS)
    assert len(plan.calls) <= MAX_CALLS
    assert any(f"first {MAX_CLAUSES} parts" in note for note in plan.skipped)


async def test_summary_lists_every_result_and_what_was_skipped() -> None:
    text = "turn on the red led and blink the fan"
    first = await DemoProvider().chat(request(text))
    assert [c.name for c in first.tool_calls] == ["gpio_switch"]
    response = await DemoProvider().chat(
        request(
            text,
            ChatMessage.assistant("", first.tool_calls),
            ChatMessage.tool("demo_1", "red_led is on"),
        )
    )
    assert response.text == (
        "Done. red_led is on. Skipped: 'blink the fan': I have no tool that does that to fan."
    )


async def test_several_results_read_as_one_sentence_each() -> None:
    response = await DemoProvider().chat(
        request(
            "x",
            ChatMessage.assistant("", ()),
            ChatMessage.tool("demo_1", "red_led is off"),
            ChatMessage.tool("demo_2", "Error: fan needs approval"),
            ChatMessage.tool("demo_3", "lamp is at 0.5"),
        )
    )
    assert response.text == "Done. red_led is off; lamp is at 0.5. Not done: fan needs approval."


@pytest.mark.parametrize(
    ("text", "device"),
    [
        ("switch the shed's fan on", "shed.fan"),
        ("switch the shed fan on", "shed.fan"),
        ("switch shed.fan on", "shed.fan"),
        ("switch the fan on", "fan"),
        ("switch the old shed's fan on", "old_shed.fan"),
    ],
)
def test_another_nodes_device_is_read_as_a_person_says_it(text: str, device: str) -> None:
    fleet = {"type": "string", "enum": ["fan", "shed.fan", "old_shed.fan"]}
    spec = ToolSpec(
        "gpio_switch",
        "switch",
        {"type": "object", "properties": {"device": fleet, "on": {"type": "boolean"}}},
    )
    assert [(c.name, dict(c.arguments)) for c in plan_sentence(text, [spec]).calls] == [
        switch(device, True)
    ]

"""DemoProvider: deterministic rules that turn a few phrasings into tool calls."""

from __future__ import annotations

from clawseed_edge.api import (
    ChatMessage,
    ChatRequest,
    StopReason,
    StreamDone,
    ToolCallReady,
    ToolSpec,
)
from clawseed_edge.providers.demo import DemoProvider

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
    assert response.text == "Done. red_led is on"
    assert response.stop_reason is StopReason.END_TURN


async def test_stream_ends_with_done() -> None:
    events = [e async for e in DemoProvider().stream(request("turn on red_led"))]
    assert isinstance(events[0], ToolCallReady) and isinstance(events[-1], StreamDone)

"""Helpers shared by the provider tests."""

from __future__ import annotations

from collections.abc import AsyncIterator

from clawseed_edge.api import ChatMessage, ChatRequest, StreamEvent, ToolSpec

LED_TOOL = ToolSpec(
    "led_on",
    "Switch an LED on",
    {"type": "object", "properties": {"pin": {"type": "integer"}}, "required": ["pin"]},
)


def ask(text: str = "switch the LED on", *, tools: bool = True, **kw: object) -> ChatRequest:
    """A small request with a system prompt and (optionally) one tool."""
    return ChatRequest(
        (ChatMessage.system("You control a Raspberry Pi."), ChatMessage.user(text)),
        tools=(LED_TOOL,) if tools else (),
        **kw,  # type: ignore[arg-type]
    )


async def collect(events: AsyncIterator[StreamEvent]) -> list[StreamEvent]:
    return [e async for e in events]

"""DemoProvider: a rule-based stand-in for a model, for trying the runtime with no model server.

It is not a language model. It reads the last user message (only the user's own text: the
engine may put recalled memory and a time prefix in front of it), finds a device named in it (from
the ``enum`` of a tool's ``device`` parameter) and a verb (on, off, toggle, blink, read, a
percentage, status), and answers with one native tool call; after tool results it answers
with a one-line summary. Anything else gets a short help text. It lets ``clawseed-edge sim``
and the quick start run a complete turn — prompt, tool call, SecurityPolicy, pins — on a fresh
machine. Configure ``[provider]`` for a real model.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from clawseed_edge.api import (
    ChatMessage,
    ChatRequest,
    ChatResponse,
    ProviderCapabilities,
    StopReason,
    StreamDone,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallReady,
    ToolSpec,
    Usage,
)

__all__ = ["DemoProvider"]

# The engine's time prefix, at the start of the message or after the recalled-memory block
# (which ends with a blank line); everything up to it is context, not the user's words.
_TIME_PREFIX = re.compile(r"(?:\A|\n\n)\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d[^\]\n]*\]\s*")
_PERCENT = re.compile(r"(\d{1,3})\s*(%|percent)")
# verb -> the word a tool name must contain to serve it, tried in this order
_VERBS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("blink", ("blink", "flash")),
    ("toggle", ("toggle", "flip")),
    ("level", ("dim", "brightness", "level", "%", "percent")),
    ("switch", ("turn", "switch", "on", "off", "enable", "disable", "start", "stop")),
    ("read", ("read", "is", "state of", "check", "pressed", "open", "closed")),
)
_STATUS_WORDS = ("status", "state of everything", "what is on", "what's on", "list devices")
# A question any configured sensor may answer: "how warm is it?" -> sensor_read.
_SENSOR_WORDS = re.compile(
    r"\b(warm|cold|hot|temperature|temp|humid|humidity|pressure|light|bright|dark|lux|"
    r"sensor|measure|voltage)\b"
)


class DemoProvider:
    """An offline, deterministic provider for demos and smoke tests (see module docstring)."""

    name = "demo"

    def __init__(self, model: str = "demo-rules") -> None:
        self.model = model
        self._counter = 0

    @property
    def capabilities(self) -> ProviderCapabilities:
        return ProviderCapabilities(native_tools=True, vision=False, streaming=False)

    async def chat(self, request: ChatRequest) -> ChatResponse:
        """Answer from rules; never fails, never blocks. Safe to cancel."""
        messages = request.messages
        tail = _trailing_tool_messages(messages)
        if tail:
            return self._response(_summarise(tail))
        user = next((m for m in reversed(messages) if m.role == "user"), None)
        text = latest_user_text(user.content if user else "")
        call = _plan_call(text.lower(), request.tools)
        if call is None:
            return self._response(_help(request.tools))
        self._counter += 1
        call = ToolCall(call.name, call.arguments, f"demo_{self._counter}")
        return self._response("", (call,))

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        """The chat answer as events (one text piece, the calls, then StreamDone)."""
        response = await self.chat(request)
        if response.text:
            yield TextDelta(response.text)
        for call in response.tool_calls:
            yield ToolCallReady(call)
        yield StreamDone(response)

    async def aclose(self) -> None:
        """Nothing to release."""

    def _response(self, text: str, calls: tuple[ToolCall, ...] = ()) -> ChatResponse:
        return ChatResponse(
            text=text,
            tool_calls=calls,
            usage=Usage(),
            stop_reason=StopReason.TOOL_USE if calls else StopReason.END_TURN,
            provider=self.name,
            model=self.model,
        )


def latest_user_text(content: str) -> str:
    """The user's own words in an engine-built user message.

    The engine sends ``[Memory]\\n- key: fact\\n\\n[YYYY-MM-DD HH:MM:SS TZ] text``; rules must
    match only ``text``, or a device named in an old recalled turn would be switched. The last
    time prefix wins, because recalled entries come before it; a message without one is read
    whole.
    """
    matches = list(_TIME_PREFIX.finditer(content))
    last = matches[-1] if matches else None
    return (content[last.end() :] if last is not None else content).strip()


def _trailing_tool_messages(messages: Sequence[ChatMessage]) -> list[ChatMessage]:
    tail: list[ChatMessage] = []
    for message in reversed(messages):
        if message.role != "tool":
            break
        tail.append(message)
    return list(reversed(tail))


def _summarise(results: Sequence[ChatMessage]) -> str:
    # A refused or failed call reads "Error: ..." (ToolResult.as_text): say it was not done.
    lines = [m.content.strip() or "(no output)" for m in results]
    done = [line for line in lines if not line.startswith("Error: ")]
    failed = [line.removeprefix("Error: ") for line in lines if line.startswith("Error: ")]
    parts = (["Done. " + " ".join(done)] if done else []) + (
        ["Not done: " + " ".join(failed)] if failed else []
    )
    return " ".join(parts) if parts else "Done."


def _help(tools: Sequence[ToolSpec]) -> str:
    devices = sorted({d for spec in tools for d in _device_enum(spec)})
    hint = f" Devices: {', '.join(devices)}." if devices else " No devices are configured."
    return (
        "I am the offline demo model (rules, not a language model): try "
        "'turn on <device>', 'turn off <device>', 'toggle <device>', 'blink <device>', "
        "'set <device> to 30%', 'read <device>' or 'status'." + hint
    )


def _device_enum(spec: ToolSpec) -> list[str]:
    props = spec.parameters.get("properties", {})
    device = props.get("device", {}) if isinstance(props, Mapping) else {}
    values = device.get("enum", []) if isinstance(device, Mapping) else []
    return [v for v in values if isinstance(v, str)]


def _mentions(text: str, device: str) -> bool:
    spoken = device.replace("_", " ").replace("-", " ")
    return device in text or spoken in text


def _sensor_call(text: str, tools: Sequence[ToolSpec]) -> ToolCall | None:
    """sensor_read of the sensor named in ``text``, else of the first configured one when
    ``text`` asks about something sensors measure."""
    spec = next((t for t in tools if t.name == "sensor_read"), None)
    if spec is None:
        return None
    props = spec.parameters.get("properties", {})
    sensors = [s for s in props.get("sensor", {}).get("enum", []) if isinstance(s, str)]
    sensor = next((s for s in sensors if _mentions(text, s)), None)
    if sensor is None and sensors and _SENSOR_WORDS.search(text):
        sensor = sensors[0]
    return None if sensor is None else ToolCall(spec.name, {"sensor": sensor})


def _plan_call(text: str, tools: Sequence[ToolSpec]) -> ToolCall | None:
    if any(w in text for w in _STATUS_WORDS):
        status = next((t for t in tools if "status" in t.name), None)
        if status is not None:
            return ToolCall(status.name, {})
    for verb, words in _VERBS:
        if not any(re.search(rf"(?<![a-z]){re.escape(w)}(?![a-z])", text) for w in words):
            continue
        for spec in tools:
            if verb not in spec.name:
                continue
            device = next((d for d in _device_enum(spec) if _mentions(text, d)), None)
            if device is None:
                continue
            args = _fill_arguments(spec, device, text)
            if args is not None:
                return ToolCall(spec.name, args)
    return _sensor_call(text, tools)


def _fill_arguments(spec: ToolSpec, device: str, text: str) -> dict[str, Any] | None:
    props: Mapping[str, Any] = spec.parameters.get("properties", {})
    required = set(spec.parameters.get("required", ()))
    args: dict[str, Any] = {"device": device}
    for name, schema in props.items():
        if name == "device" or not isinstance(schema, Mapping):
            continue
        kind = schema.get("type")
        value: Any = None
        if kind == "boolean":
            if re.search(r"\b(on|enable|start)\b", text):
                value = True
            elif re.search(r"\b(off|disable|stop)\b", text):
                value = False
        elif kind == "number" and (m := _PERCENT.search(text)):
            value = min(int(m.group(1)), 100) / 100
        elif kind == "integer" and name == "count" and (m := re.search(r"(\d+)\s*times", text)):
            value = int(m.group(1))
        if value is not None:
            args[name] = value
        elif name in required:
            return None
    return args

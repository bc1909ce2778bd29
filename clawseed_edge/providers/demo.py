"""DemoProvider: a rule-based stand-in for a model, for trying the runtime with no model server.

It is not a language model. It reads the last user message (only the user's own text: the
engine may put recalled memory and a time prefix in front of it) clause by clause
(:mod:`clawseed_edge.providers.demo_plan`): each device it names (from the ``enum`` of a tool's
``device`` parameter) gets the verb of its own clause (on, off, toggle, blink, read, a
percentage, status), so "turn off the red led and turn on the fan" is two native tool calls,
each with its own value; a negated clause ("don't ...") is left alone. After the tool results it
answers with a short summary that also says what it skipped. Anything else gets a short help
text. It lets ``clawseed-edge sim`` and the quick start run a complete turn — prompt, tool call,
SecurityPolicy, pins — on a fresh machine. Configure ``[provider]`` for a real model.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Sequence

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
    for_people,
)

from .demo_lang import deferred_reason, is_hedged, is_question, to_english
from .demo_plan import device_names, plan_sentence

__all__ = ["DemoProvider"]

# The engine's time prefix, at the start of the message or after the recalled-memory block
# (which ends with a blank line); everything up to it is context, not the user's words.
_TIME_PREFIX = re.compile(r"(?:\A|\n\n)\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d[^\]\n]*\]\s*")


# Tools that only look; a question may use them.
_READS = re.compile(r"read|status|history|scan|list|recall|info")


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
        said = _user_text(messages)
        if not tail:
            # Never act on what was not asked now: propose the automation or job instead.
            later = deferred_reason(said)
            if later is not None:
                return self._response(_proposal(said, later))
        plan = plan_sentence(to_english(said), request.tools)
        if not tail and plan.calls and (is_hedged(said) or is_question(said)):
            writes = [c.name for c in plan.calls if not _READS.search(c.name)]
            if writes:
                return self._response(_not_asked(said))
        if tail:
            # Said after the results, so that what was skipped is not lost among them.
            return self._response(_summarise(tail, plan.skipped))
        if not plan.calls:
            if plan.skipped:
                return self._response(
                    _skipped_sentence(plan.skipped) + _devices_hint(request.tools)
                )
            return self._response(_help(request.tools))
        calls = []
        for call in plan.calls:
            self._counter += 1
            calls.append(ToolCall(call.name, call.arguments, f"demo_{self._counter}"))
        return self._response("", tuple(calls))

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


def _user_text(messages: Sequence[ChatMessage]) -> str:
    user = next((m for m in reversed(messages) if m.role == "user"), None)
    return latest_user_text(user.content if user else "")


def _sentence(text: str) -> str:
    """``text`` ending in a full stop (or the punctuation it already ends with)."""
    text = text.strip()
    return text if not text or text[-1] in ".!?:" else text + "."


def _skipped_sentence(skipped: Sequence[str]) -> str:
    return _sentence("Skipped: " + "; ".join(skipped))


def _summarise(results: Sequence[ChatMessage], skipped: Sequence[str] = ()) -> str:
    # A refused or failed call reads "Error: ..." (ToolResult.as_text): say it was not done.
    lines = [for_people(m.content) or "(no output)" for m in results]
    done = [line for line in lines if not line.startswith("Error: ")]
    failed = [line.removeprefix("Error: ") for line in lines if line.startswith("Error: ")]
    parts = (["Done. " + _sentence("; ".join(done))] if done else []) + (
        ["Not done: " + _sentence("; ".join(failed))] if failed else []
    )
    if skipped:
        parts.append(_skipped_sentence(skipped))
    return " ".join(parts) if parts else "Done."


def _devices_hint(tools: Sequence[ToolSpec]) -> str:
    devices = sorted(device_names(tools))
    return f" Devices: {', '.join(devices)}." if devices else " No devices are configured."


def _help(tools: Sequence[ToolSpec]) -> str:
    return (
        "I am the offline demo model (rules, not a language model): try "
        "'turn on <device>', 'turn off <device>', 'toggle <device>', 'blink <device>', "
        "'set <device> to 30%', 'read <device>' or 'status'." + _devices_hint(tools)
    )


def _proposal(said: str, words: str) -> str:
    """The answer to a request for later or on a condition: what would do it, not the act."""
    return (
        f"I did not do that now: {words!r} makes it a request for later or on a condition, and "
        "I act only on what is asked now. An automation would do it: a rule on a sensor or an "
        "input ([[automations]] in config.toml, or `clawseed-edge automations add`), or a "
        "scheduled job ([[jobs]] with a cron time, docs/scheduler.md). Say it again without the "
        "condition to do it at once."
    )


def _not_asked(said: str) -> str:
    return (
        "That reads as a question or a maybe, so I did not switch anything. Say it as a "
        "command (for example 'turn on <device>') to do it."
    )

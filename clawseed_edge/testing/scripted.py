"""ScriptedProvider: a Provider that replays queued responses and records what it was asked.

Use it to test an agent (yours or ours) without a model::

    provider = ScriptedProvider([
        ScriptedProvider.call("set_led", state="on"),
        ScriptedProvider.text("The LED is on."),
    ])
    agent = AgentBuilder().provider(provider).tools([SetLed()]).build()
    assert await agent.run("turn the led on") == "The LED is on."
    assert provider.requests[1].messages[-1].role == "tool"

A queued item is a ``ChatResponse``, a plain ``str`` (a text answer; for a prompt-guided
provider it may hold call markup), a ``ToolCall`` or a list of them (native calls; rendered as
``<tool_call>`` text when ``native_tools=False``), or an exception instance, which is raised.
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import replace
from typing import Any, cast

from clawseed_edge.api import (
    ChatRequest,
    ChatResponse,
    ProviderCapabilities,
    ProviderError,
    StopReason,
    StreamDone,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCall,
    ToolCallReady,
    Usage,
)

__all__ = ["ScriptExhausted", "ScriptItem", "ScriptedProvider"]

ScriptItem = ChatResponse | str | ToolCall | Sequence[ToolCall] | BaseException


class ScriptExhausted(ProviderError, AssertionError):
    """The test asked the scripted provider for more responses than were queued."""

    code = "scripted_provider_exhausted"


class ScriptedProvider:
    """A zero-latency Provider that answers from a queue.

    Args:
        responses: Items to answer with, in order (see the module docstring).
        native_tools: Capability flag: native tool calls (else calls are rendered as text).
        streaming: Capability flag: ``stream()`` is used by the engine.
        vision: Capability flag.
        name: Provider name reported in responses.
        model: Model name reported in responses.
        delay_s: Seconds to wait before each answer (to test aborts and timeouts).
        usage: Token usage reported with each response that has none.

    Attributes:
        requests: Every ``ChatRequest`` received, in order.
        consumed: How many queued items were used.
    """

    def __init__(
        self,
        responses: Iterable[ScriptItem] = (),
        *,
        native_tools: bool = True,
        streaming: bool = False,
        vision: bool = False,
        name: str = "scripted",
        model: str = "scripted-model",
        delay_s: float = 0.0,
        usage: Usage | None = None,
    ) -> None:
        self.name = name
        self.model = model
        self._capabilities = ProviderCapabilities(
            native_tools=native_tools, vision=vision, streaming=streaming
        )
        self.delay_s = delay_s
        self.usage = usage if usage is not None else Usage(10, 5)
        self._queue: deque[ScriptItem] = deque()
        self.requests: list[ChatRequest] = []
        self.consumed = 0
        self.queued = 0
        self.closed = False
        self._call_ids = 0
        self.add(*responses)

    # --- building scripts ----------------------------------------------------------------

    @staticmethod
    def text(content: str, *, thinking: str | None = None) -> ChatResponse:
        """A plain text answer."""
        return ChatResponse(text=content, thinking=thinking, stop_reason=StopReason.END_TURN)

    @staticmethod
    def call(name: str, /, **arguments: Any) -> ChatResponse:
        """A response making one native tool call ``name(**arguments)`` (and no text; use
        :meth:`calls` for a call with text)."""
        return ScriptedProvider.calls(ToolCall(name, arguments))

    @staticmethod
    def calls(*calls: ToolCall, text: str = "") -> ChatResponse:
        """A response making several native tool calls."""
        return ChatResponse(text=text, tool_calls=tuple(calls), stop_reason=StopReason.TOOL_USE)

    @staticmethod
    def tool_call_markup(name: str, /, **arguments: Any) -> str:
        """``<tool_call>{"name": .., "arguments": {..}}</tool_call>``, for prompt-guided tests."""
        body = json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)
        return f"<tool_call>\n{body}\n</tool_call>"

    def add(self, *responses: ScriptItem) -> ScriptedProvider:
        """Queue more responses; returns self."""
        self._queue.extend(responses)
        self.queued += len(responses)
        return self

    @property
    def remaining(self) -> int:
        """How many queued items are left."""
        return len(self._queue)

    # --- Provider ------------------------------------------------------------------------

    @property
    def capabilities(self) -> ProviderCapabilities:
        return self._capabilities

    async def chat(self, request: ChatRequest) -> ChatResponse:
        """The next queued response (raises the queued exception, if that is next)."""
        return await self._next(request)

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        """The next response as events: thinking, text in pieces, tool calls, StreamDone."""
        response = await self._next(request)
        if response.thinking:
            yield ThinkingDelta(response.thinking)
        for piece in _pieces(response.text):
            yield TextDelta(piece)
        for call in response.tool_calls:
            yield ToolCallReady(call)
        yield StreamDone(response)

    async def aclose(self) -> None:
        self.closed = True

    # --- internals -----------------------------------------------------------------------

    async def _next(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        if not self._queue:
            raise ScriptExhausted(
                f"ScriptedProvider has no response left for request #{len(self.requests)}: "
                f"{self.queued} were queued and {self.consumed} consumed; queue more with "
                "ScriptedProvider.add(...)",
                provider=self.name,
                model=self.model,
            )
        item = self._queue.popleft()
        self.consumed += 1
        if isinstance(item, BaseException):
            raise item
        return self._response(item)

    def _response(self, item: ScriptItem) -> ChatResponse:
        if isinstance(item, str):
            response = ChatResponse(text=item)
        elif isinstance(item, ToolCall):
            response = self.calls(item)
        elif isinstance(item, ChatResponse):
            response = item
        else:
            response = self.calls(*cast(Sequence[ToolCall], item))
        if response.tool_calls:
            if self._capabilities.native_tools:
                response = replace(
                    response, tool_calls=tuple(self._with_id(c) for c in response.tool_calls)
                )
            else:
                markup = "\n".join(
                    self.tool_call_markup(c.name, **dict(c.arguments)) for c in response.tool_calls
                )
                text = f"{response.text}\n{markup}" if response.text else markup
                response = replace(response, text=text, tool_calls=())
        return replace(
            response,
            usage=response.usage if response.usage != Usage() else self.usage,
            provider=response.provider or self.name,
            model=response.model or self.model,
        )

    def _with_id(self, call: ToolCall) -> ToolCall:
        if call.id:
            return call
        self._call_ids += 1
        return replace(call, id=f"scripted_{self._call_ids}")


def _pieces(text: str, parts: int = 3) -> list[str]:
    if not text:
        return []
    size = max(1, -(-len(text) // parts))
    return [text[i : i + size] for i in range(0, len(text), size)]

"""Tool dispatchers: how tools reach the model and how calls come back.

A dispatcher sits between the engine and the provider's way of calling tools. The native one
passes tool specs to the provider and reads structured calls; the prompt-guided one
(:class:`~clawseed_edge.agent.toolcalls.prompt_guided.XmlToolDispatcher`) describes tools in the system
prompt and parses calls out of the text. :func:`select_dispatcher` picks by the provider's
``capabilities.native_tools``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Protocol, runtime_checkable

from clawseed_edge.api import (
    ChatMessage,
    ChatResponse,
    Provider,
    ToolCall,
    ToolResult,
    ToolSpec,
)

from .parsed import ParsedResponse

__all__ = [
    "NativeToolDispatcher",
    "ParsedResponse",
    "ToolDispatcher",
    "ensure_call_ids",
    "read_response",
    "select_dispatcher",
]


@runtime_checkable
class ToolDispatcher(Protocol):
    """How the engine offers tools to a provider and reads its calls.

    A dispatcher may also define ``read(response) -> ParsedResponse``, which gives text, calls
    and the history message from one parse; the engine uses it when present (both built-ins
    have it) and otherwise calls :meth:`parse_response` then :meth:`assistant_message`
    (see :func:`read_response`).

    Attributes:
        streams_text: True if the engine may stream the provider's text live (native calls
            never appear in the text); False if the text must be parsed first and only the
            cleaned text is shown.
    """

    streams_text: bool

    def tools_for_request(self, specs: Sequence[ToolSpec]) -> tuple[ToolSpec, ...]:
        """The specs to put in ``ChatRequest.tools`` (native: all; prompt-guided: none)."""
        ...

    def system_prompt_section(self, specs: Sequence[ToolSpec]) -> str:
        """Text for the system prompt's tools section (native: ``""``)."""
        ...

    def parse_response(self, response: ChatResponse) -> tuple[str, list[ToolCall]]:
        """The visible text and the calls; calls without an id get ``call_1``, ``call_2`` ..."""
        ...

    def assistant_message(
        self, response: ChatResponse, text: str, calls: Sequence[ToolCall]
    ) -> ChatMessage:
        """The assistant message to keep in history for this response."""
        ...

    def result_messages(self, results: Sequence[tuple[ToolCall, ToolResult]]) -> list[ChatMessage]:
        """The messages that carry tool results back to the model."""
        ...


def read_response(dispatcher: ToolDispatcher, response: ChatResponse) -> ParsedResponse:
    """Parse ``response`` once through ``dispatcher``.

    The built-in dispatchers read text, calls and the history message in one pass (their
    ``read``); a dispatcher written against the older protocol (only ``parse_response`` and
    ``assistant_message``) still works, at the cost of its own second look.
    """
    read = getattr(dispatcher, "read", None)
    if read is not None:
        parsed: ParsedResponse = read(response)
        return parsed
    text, calls = dispatcher.parse_response(response)
    return ParsedResponse(text, tuple(calls), dispatcher.assistant_message(response, text, calls))


def ensure_call_ids(calls: Sequence[ToolCall]) -> list[ToolCall]:
    """The calls, each with an id (``call_<n>`` by position when missing or repeated)."""
    out: list[ToolCall] = []
    seen: set[str] = set()
    for i, call in enumerate(calls, start=1):
        if not call.id or call.id in seen:
            call = replace(call, id=f"call_{i}")
        seen.add(call.id)
        out.append(call)
    return out


class NativeToolDispatcher:
    """For providers with native tool calling: specs in the request, structured calls back."""

    streams_text = True

    def tools_for_request(self, specs: Sequence[ToolSpec]) -> tuple[ToolSpec, ...]:
        return tuple(specs)

    def system_prompt_section(self, specs: Sequence[ToolSpec]) -> str:
        return ""

    def read(self, response: ChatResponse) -> ParsedResponse:
        """Text, calls and history message of ``response`` in one pass."""
        calls = tuple(ensure_call_ids(response.tool_calls))
        return ParsedResponse(response.text, calls, ChatMessage.assistant(response.text, calls))

    def parse_response(self, response: ChatResponse) -> tuple[str, list[ToolCall]]:
        return response.text, ensure_call_ids(response.tool_calls)

    def assistant_message(
        self, response: ChatResponse, text: str, calls: Sequence[ToolCall]
    ) -> ChatMessage:
        return ChatMessage.assistant(text, tuple(calls))

    def result_messages(self, results: Sequence[tuple[ToolCall, ToolResult]]) -> list[ChatMessage]:
        return [ChatMessage.tool(call.id, result.as_text(), call.name) for call, result in results]


def select_dispatcher(provider: Provider) -> ToolDispatcher:
    """The native dispatcher if the provider calls tools natively, else the prompt-guided one."""
    capabilities = getattr(provider, "capabilities", None)
    if capabilities is None or getattr(capabilities, "native_tools", True):
        return NativeToolDispatcher()
    from .prompt_guided import XmlToolDispatcher  # type: ignore[import-not-found,unused-ignore]

    dispatcher: ToolDispatcher = XmlToolDispatcher()
    return dispatcher

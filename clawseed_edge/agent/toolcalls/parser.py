"""Tool-call extraction from model text, for prompt-guided tool use.

:func:`parse_tool_calls` reads the call markup that open models really emit and returns the text
without it. Recognised shapes (tag names are matched case-insensitively):

- ``<tool_call>{"name": .., "arguments": {..}}</tool_call>`` (also ``<toolcall>``,
  ``<tool-call>``); arguments as an object or a JSON string holding one, or under
  ``parameters``; a list or several objects in one block; Qwen3-Coder's
  ``<function=NAME><parameter=P>v</parameter></function>`` and GLM-4.5's
  ``NAME<arg_key>k</arg_key><arg_value>v</arg_value>`` inside the block.
- ``<function_calls><invoke name="X"><parameter name="p">v</parameter></invoke></function_calls>``
  and MiniMax's ``<minimax:tool_call>`` wrapper (``<invoke>`` elements or JSON lines).
- fenced ```` ```tool_call ```` blocks with JSON inside; xAI's ```` ```tool NAME ```` fences.
- Mistral's ``[TOOL_CALLS] [{..}, ..]`` and ``[TOOL_CALLS]NAME[ARGS]{..}``.
- Llama 3.1's ``<function=NAME>{..}</function>`` and ``<|python_tag|>{..}; {..}``.
- DeepSeek's ``<｜tool▁calls▁begin｜>`` token format (V3 with ``function`` and a json fence,
  V3.1 without).
- Kimi K2's ``<|tool_calls_section_begin|>`` sections, IBM Granite's ``<|tool_call|>[..]``,
  Phi-4-mini's ``<|tool_call|>..<|/tool_call|>`` and gpt-oss's harmony messages
  (``<|channel|>commentary to=functions.NAME ..<|message|>{..}<|call|>``; an ``analysis``
  message is cut unread): see :mod:`.token_formats`.

Wherever a block holds JSON, the JSON is read first and the closing tag looked for after it,
so a closing tag inside a JSON string (``"</tool_call>"`` in a file's content) does not end
the call.

Security: a call is only ever read from inside one of these explicit wrappers. Bare JSON, a
```` ```json ```` fence, any other code fence, inline code (```` `..` ```` on one line, where a
model quotes a format it explains), ``<think>`` blocks and echoed tool results
(``<tool_result>``, ``<tool_response>``, ``<function_results>``) never yield a call, so text
that a web page or a sensor label put in front of the model cannot become a call by itself.
Tool names must match ``^[a-zA-Z0-9_-]{1,64}$``; other names are dropped.

Robustness: the parser never raises. Malformed markup yields no call and stays in the
remaining text, so the user sees what the model wrote; a special-token block whose end is
clear but whose JSON is not is also reported (:func:`scan_tool_calls`), so that the
prompt-guided dispatcher can tell the model what to fix. Work is linear in the input (closing
tags are found with cached forward searches and JSON is decoded over disjoint slices, under a
work budget); input longer than :data:`MAX_INPUT_CHARS` is returned unparsed.

Layout: this module is the public face; the scan lives in :mod:`.scanner`, the readers of
block bodies in :mod:`.elements`, :class:`ParsedCall` and the JSON decoding in
:mod:`.calls`, and ``<think>`` splitting and span joining in :mod:`.text`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from .calls import TOOL_NAME_RE, ParsedCall, UnreadableCall
from .scanner import CallScanner
from .text import join_cuts, split_thinking

__all__ = [
    "MAX_INPUT_CHARS",
    "TOOL_NAME_RE",
    "ParsedCall",
    "ToolCallScan",
    "parse_tool_calls",
    "read_tool_calls",
    "scan_tool_calls",
    "split_thinking",
]

log = logging.getLogger(__name__)

MAX_INPUT_CHARS = 2_000_000
"""Texts longer than this (in characters) are returned stripped, with no call."""


def parse_tool_calls(text: str) -> tuple[str, list[ParsedCall]]:
    """Read tool calls from model text.

    ``<think>`` blocks are stripped first (calls inside them are never read). See the module
    docstring for the shapes and the security rules.

    Args:
        text: The model's complete response text.

    Returns:
        ``(remaining_text, calls)``: the text without think blocks and without the markup of
        the calls that were read (malformed markup stays), whitespace tidied; and the calls in
        the order they appear. Never raises.
    """
    _, remaining, calls = read_tool_calls(text)
    return remaining, calls


def read_tool_calls(text: str) -> tuple[str, str, list[ParsedCall]]:
    """:func:`parse_tool_calls`, also returning the text without think blocks (markup kept).

    Returns:
        ``(content, remaining_text, calls)``: ``content`` is what a prompt-guided dispatcher
        keeps in history (the model's own markup, so it sees what it asked for); the other two
        are :func:`parse_tool_calls`'s result. One pass over the text. Never raises.
    """
    scan = scan_tool_calls(text)
    return scan.content, scan.remaining, scan.calls


@dataclass(frozen=True, slots=True)
class ToolCallScan:
    """Everything one pass over a model text found.

    Attributes:
        content: The text without think blocks, markup kept (what history keeps).
        remaining: The text without think blocks and without the markup of the calls read
            (unreadable blocks stay), whitespace tidied: :func:`parse_tool_calls`'s text.
        calls: The calls read, in order.
        unreadable: Closed call blocks whose arguments could not be read (special-token
            formats; see :mod:`.token_formats`), in order; none of them is in ``calls``.
        remaining_reported: ``remaining`` without the unreadable blocks too, for a caller that
            turns them into refused calls instead of showing them.
    """

    content: str
    remaining: str
    calls: list[ParsedCall]
    unreadable: list[UnreadableCall] = field(default_factory=list)
    remaining_reported: str = ""


def scan_tool_calls(text: str) -> ToolCallScan:
    """:func:`read_tool_calls` with the unreadable blocks as well. Never raises."""
    if not isinstance(text, str):
        return ToolCallScan("", "", [])
    visible = text
    try:
        visible, _ = split_thinking(text)
        if len(text) > MAX_INPUT_CHARS:
            return ToolCallScan(visible.strip(), text.strip(), [], [], text.strip())
        scanner = CallScanner(visible)
        scanner.run()
        remaining = join_cuts(visible, _merged(scanner.cuts))
        reported = remaining
        if scanner.unreadable:
            spans = [(start, end) for start, end, _ in scanner.unreadable]
            reported = join_cuts(visible, _merged(scanner.cuts + spans))
        unreadable = [u for _, _, u in scanner.unreadable]
        return ToolCallScan(visible.strip(), remaining, scanner.calls, unreadable, reported)
    except Exception:  # a bug here must not end the turn: the text survives, no call runs
        log.exception("tool-call parser failed on a %d-character text", len(text))
        return ToolCallScan(visible.strip(), text.strip(), [], [], text.strip())


def _merged(cuts: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Cut spans in order, overlapping ones joined (harmony cuts a header before its body)."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(cuts):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged

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

Security: a call is only ever read from inside one of these explicit wrappers. Bare JSON, a
```` ```json ```` fence, any other code fence, ``<think>`` blocks and echoed tool results
(``<tool_result>``, ``<tool_response>``, ``<function_results>``) never yield a call, so text
that a web page or a sensor label put in front of the model cannot become a call by itself.
Tool names must match ``^[a-zA-Z0-9_-]{1,64}$``; other names are dropped.

Robustness: the parser never raises. Malformed markup yields no call and stays in the
remaining text, so the user sees what the model wrote. Work is linear in the input (closing
tags are found with cached forward searches and JSON is decoded over disjoint slices, under a
work budget); input longer than :data:`MAX_INPUT_CHARS` is returned unparsed.

Layout: this module is the public face; the scan lives in :mod:`.scanner`, the readers of
block bodies in :mod:`.elements`, :class:`ParsedCall` and the JSON decoding in
:mod:`.calls`, and ``<think>`` splitting and span joining in :mod:`.text`.
"""

from __future__ import annotations

import logging

from .calls import TOOL_NAME_RE, ParsedCall
from .scanner import CallScanner
from .text import join_cuts, split_thinking

__all__ = [
    "MAX_INPUT_CHARS",
    "TOOL_NAME_RE",
    "ParsedCall",
    "parse_tool_calls",
    "read_tool_calls",
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
    if not isinstance(text, str):
        return "", "", []
    visible = text
    try:
        visible, _ = split_thinking(text)
        if len(text) > MAX_INPUT_CHARS:
            return visible.strip(), text.strip(), []
        scanner = CallScanner(visible)
        scanner.run()
        return visible.strip(), join_cuts(visible, scanner.cuts), scanner.calls
    except Exception:  # a bug here must not end the turn: the text survives, no call runs
        log.exception("tool-call parser failed on a %d-character text", len(text))
        return visible.strip(), text.strip(), []

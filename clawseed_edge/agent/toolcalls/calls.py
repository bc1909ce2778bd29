"""The parsed call and the JSON decoding behind it, for :mod:`clawseed_edge.agent.toolcalls.parser`.

Every helper is pure, never raises on bad input and works only on the slice it is given.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, NamedTuple

__all__ = [
    "JSON_DECODER",
    "TOOL_NAME_RE",
    "WHITESPACE",
    "JsonRun",
    "ParsedCall",
    "UnreadableCall",
    "call_from_obj",
    "calls_from_values",
    "decode_json",
    "decode_run",
    "decode_values",
    "is_json_content",
    "json_at",
    "make_call",
    "strip_inner_fence",
]

TOOL_NAME_RE = re.compile(r"[a-zA-Z0-9_-]{1,64}")
"""What a tool name must fully match (what Anthropic, OpenAI and Ollama accept)."""

JSON_DECODER = json.JSONDecoder()
WHITESPACE = " \t\r\n"
"""What JSON (and these formats) count as whitespace between values."""


@dataclass(frozen=True, slots=True)
class ParsedCall:
    """One tool call read from model text.

    Attributes:
        name: The tool's name (already checked against :data:`TOOL_NAME_RE`).
        arguments: The decoded arguments, always a dict.
        raw: The markup the call was read from (a whole block when it held several calls).
        shape: Which markup it came in: ``tool_call``, ``invoke``, ``fence``, ``xai_fence``,
            ``mistral``, ``llama_function``, ``python_tag``, ``deepseek``, ``kimi_k2``,
            ``granite``, ``phi4_mini`` or ``harmony``.
    """

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    raw: str = field(default="", compare=False, repr=False)
    shape: str = field(default="", compare=False)


def decode_json(s: str) -> tuple[bool, Any]:
    """``json.loads`` that reports failure instead of raising (bad JSON, depth, huge ints)."""
    try:
        return True, json.loads(s)
    except (ValueError, RecursionError):
        return False, None


def decode_run(s: str, seps: str) -> tuple[list[Any], int]:
    """JSON values from the start of ``s``, separated by whitespace or ``seps`` characters.

    Returns the values and the index just after the last one; stops at anything else.
    """
    values: list[Any] = []
    pos = end = 0
    n = len(s)
    while True:
        while pos < n and (s[pos] in WHITESPACE or (values and s[pos] in seps)):
            pos += 1
        try:
            value, pos = JSON_DECODER.raw_decode(s, pos)
        except (ValueError, RecursionError):
            return values, end
        values.append(value)
        end = pos


class JsonRun(NamedTuple):
    """What :func:`json_at` read: the values, where they end, why reading stopped early."""

    values: list[Any]
    end: int
    """Index just after the last value (the start position when there is none)."""
    error: str
    """Why the first value could not be read; empty when one was."""
    reached: int
    """How far the decoder read (for the scanner's work budget)."""


def json_at(s: str, start: int, seps: str = ",;") -> JsonRun:
    """JSON values beginning at ``s[start]`` (after whitespace), read in place (no copy).

    The values run as in :func:`decode_run`. A closing tag inside a JSON string is part of
    the string, so a block's end is found after its JSON, not by searching for the tag.
    Work is linear in the characters the decoder reads; never raises.
    """
    values: list[Any] = []
    pos = end = start
    n = len(s)
    while True:
        while pos < n and (s[pos] in WHITESPACE or (values and s[pos] in seps)):
            pos += 1
        try:
            value, pos = JSON_DECODER.raw_decode(s, pos)
        except RecursionError:
            why = "the JSON is nested too deeply"
            return JsonRun(values, end, "" if values else why, n)
        except ValueError as exc:
            reached = exc.pos if isinstance(exc, json.JSONDecodeError) else n
            why = f"not valid JSON ({exc.msg if isinstance(exc, json.JSONDecodeError) else exc})"
            return JsonRun(values, end, "" if values else why, max(reached, end))
        values.append(value)
        end = pos


@dataclass(frozen=True, slots=True)
class UnreadableCall:
    """A call whose markup was clear (a closed block) but whose arguments could not be read.

    Attributes:
        name: The tool's name when the markup gave one (else empty).
        error: Why the arguments could not be read.
        raw: The markup (the whole block).
        shape: Which markup it came in (as :attr:`ParsedCall.shape`).
    """

    name: str
    error: str
    raw: str = field(repr=False)
    shape: str


def decode_values(s: str) -> list[Any] | None:
    """One or more JSON values making up all of ``s``; None if anything else is there."""
    values, end = decode_run(s, ",;")
    return values if values and not s[end:].strip() else None


def call_from_obj(obj: Any, shape: str, raw: str) -> ParsedCall | None:
    """A call from ``{"name": .., "arguments"|"parameters": ..}``; None if it is not one."""
    if not isinstance(obj, dict):
        return None
    if "name" not in obj and isinstance(obj.get("function"), dict):
        obj = obj["function"]  # OpenAI's {"type": "function", "function": {...}}
    name = obj.get("name")
    if "arguments" in obj:
        args = obj["arguments"]
    else:
        args = obj.get("parameters")
    if not isinstance(name, str):
        return None
    return make_call(name, args, shape, raw)


def make_call(name: str, args: Any, shape: str, raw: str) -> ParsedCall | None:
    """A checked call: valid name, arguments an object (or a JSON string of one, or absent)."""
    name = name.strip()
    if TOOL_NAME_RE.fullmatch(name) is None:
        return None
    if args is None:
        args = {}
    elif isinstance(args, str):
        if not args.strip():
            args = {}
        else:
            ok, args = decode_json(args)
            if not ok:
                return None
    if not isinstance(args, dict):
        return None
    return ParsedCall(name, args, raw, shape)


def calls_from_values(values: list[Any] | None, shape: str, raw: str) -> list[ParsedCall]:
    """Calls from decoded JSON values, each an object or a list of objects."""
    calls: list[ParsedCall] = []
    for value in values or ():
        items = value if isinstance(value, list) else [value]
        for item in items:
            call = call_from_obj(item, shape, raw)
            if call is not None:
                calls.append(call)
    return calls


def strip_inner_fence(s: str) -> str:
    """Content without a surrounding ```` ``` ```` fence (a model's ```` ```json ```` inside a wrapper)."""
    s = s.strip()
    if s.startswith("```") and s.endswith("```") and len(s) >= 6:
        nl = s.find("\n")
        if nl < 0:
            return s
        return s[nl + 1 : -3].strip()
    return s


def is_json_content(content: str) -> bool:
    """Whether block content is JSON; only JSON can show that a block cut short is complete."""
    return strip_inner_fence(content).startswith(("{", "["))

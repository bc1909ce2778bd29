"""Call formats written with a model's special tokens: Kimi K2.

Handlers for :class:`~clawseed_edge.agent.toolcalls.scanner.CallScanner`, one per marker; each
gets the scanner (through the narrow :class:`Scan` protocol) and the marker match and returns
where scanning resumes. The shapes, as the models' chat templates and docs write them:

- Kimi K2: ``<|tool_calls_section_begin|>`` then, per call, ``<|tool_call_begin|>`` +
  ``functions.NAME:IDX`` + ``<|tool_call_argument_begin|>`` + JSON + ``<|tool_call_end|>``, then
  ``<|tool_calls_section_end|>``.

In every shape the JSON is read first and the end token looked for after it, so an end token
inside a JSON string does not end the call. A call whose end is clear but whose arguments are
not readable JSON is reported (:class:`~clawseed_edge.agent.toolcalls.calls.UnreadableCall`),
not run, and its block stays in the text.
"""

from __future__ import annotations

import json
import re
from typing import Any, Protocol

from .calls import JsonRun, ParsedCall, UnreadableCall, make_call

__all__ = [
    "KIMI_MARKER",
    "Scan",
    "kimi_section",
    "unreadable_reason",
]

KIMI_MARKER = r"<\|tool_calls?_section_begin\|>"

_KIMI_SECTION_END = re.compile(r"<\|tool_calls?_section_end\|>")
_KIMI_CALL_HEAD = re.compile(
    r"\s*<\|tool_call_begin\|>\s*([^\s<>]{1,200}?)\s*<\|tool_call_argument_begin\|>"
)
_KIMI_CALL_END = re.compile(r"<\|tool_call_end\|>")
# What may not come inside one call: the start of another call or section.
_KIMI_OPEN = re.compile(r"<\|tool_call_begin\|>|" + KIMI_MARKER)
_KIMI_INDEX = re.compile(r":\d{1,9}\Z")
_SPACE = re.compile(r"\s*")

#: How much of an unreadable body is decoded again to say what is wrong with it, in characters.
_REASON_BUDGET = 100_000


class Find(Protocol):
    """The scanner's cached forward search."""

    def find(self, pos: int) -> re.Match[str] | None: ...


class Scan(Protocol):
    """What a handler may use of the scanner."""

    text: str

    def finder(self, pattern: re.Pattern[str]) -> Find: ...

    def charge(self, n: int) -> None: ...

    def accept(self, start: int, end: int, calls: list[ParsedCall]) -> bool: ...

    def report(self, start: int, end: int, unreadable: UnreadableCall) -> None: ...

    def json_run(
        self,
        pos: int,
        opener: re.Pattern[str],
        seps: str = ",;",
        closer: re.Pattern[str] | None = None,
    ) -> JsonRun: ...

    def json_block(
        self, pos: int, closer: re.Pattern[str] | None, opener: re.Pattern[str], seps: str = ",;"
    ) -> tuple[list[Any], int, int] | None: ...


def unreadable_reason(body: str) -> str:
    """Why ``body`` is not usable as a call's JSON arguments, for the message to the model."""
    stripped = body[:_REASON_BUDGET].strip()
    if not stripped:
        return "the call has no JSON arguments"
    try:
        value = json.loads(stripped)
    except RecursionError:
        return "the arguments are nested too deeply"
    except ValueError as exc:
        return f"the arguments are not valid JSON ({exc})"
    if isinstance(value, dict):
        return "the arguments hold no call in a known format"
    return "the arguments are not a JSON object"


def _kimi_name(call_id: str) -> str:
    """``functions.get_weather:0`` -> ``get_weather`` (the index and namespace dropped)."""
    name = _KIMI_INDEX.sub("", call_id)
    return name.rsplit(".", 1)[-1]


def kimi_section(scan: Scan, m: re.Match[str]) -> int:
    """A Kimi K2 ``<|tool_calls_section_begin|>`` section: every call in it, or none.

    One unreadable call spoils the section (its calls are not run; it is reported); a call
    with an invalid name is dropped alone. Anything else inside the section (prose, a call
    without its end token) makes it text.
    """
    text = scan.text
    pos = m.end()
    found: list[tuple[str, Any]] = []
    broken: tuple[str, str] | None = None
    while (head := _KIMI_CALL_HEAD.match(text, pos)) is not None:
        name = _kimi_name(head.group(1))
        block = scan.json_block(head.end(), _KIMI_CALL_END, _KIMI_OPEN, seps="")
        if block is not None and len(block[0]) == 1:
            found.append((name, block[0][0]))
            pos = block[2]
            continue
        close = scan.finder(_KIMI_CALL_END).find(head.end())
        following = scan.finder(_KIMI_OPEN).find(head.end())
        if close is None or (following is not None and following.start() < close.start()):
            return m.end()  # cut off inside a call: what it meant is unknown
        body = text[head.end() : close.start()]
        scan.charge(len(body))
        if not body.strip():
            found.append((name, {}))  # a tool without parameters
        elif broken is None:
            broken = (name, unreadable_reason(body))
        pos = close.end()
    rest = _SPACE.match(text, pos)
    assert rest is not None  # \s* always matches
    end_m = _KIMI_SECTION_END.match(text, rest.end())
    if end_m is not None:
        end = end_m.end()
    elif rest.end() == len(text) and (found or broken):
        end = len(text)  # stopped before the section's end token
    else:
        return m.end()
    raw = text[m.start() : end]
    if broken is not None:
        scan.report(m.start(), end, UnreadableCall(broken[0], broken[1], raw, "kimi_k2"))
        return end
    calls = [c for name, args in found if (c := make_call(name, args, "kimi_k2", raw))]
    scan.accept(m.start(), end, calls)
    return end

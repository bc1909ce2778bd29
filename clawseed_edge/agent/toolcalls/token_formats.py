"""Call formats written with a model's special tokens: Kimi K2, Granite and Phi-4-mini, gpt-oss.

Handlers for :class:`~clawseed_edge.agent.toolcalls.scanner.CallScanner`, one per marker; each
gets the scanner (through the narrow :class:`Scan` protocol) and the marker match and returns
where scanning resumes. The shapes, as the models' chat templates and docs write them:

- Kimi K2: ``<|tool_calls_section_begin|>`` then, per call, ``<|tool_call_begin|>`` +
  ``functions.NAME:IDX`` + ``<|tool_call_argument_begin|>`` + JSON + ``<|tool_call_end|>``, then
  ``<|tool_calls_section_end|>``.
- IBM Granite 3: ``<|tool_call|>`` followed by a JSON list of ``{"name", "arguments"}``
  (no closing token; the turn ends with ``<|end_of_text|>``).
- Phi-4-mini: ``<|tool_call|>`` + JSON (an object or a list) + ``<|/tool_call|>``.
- gpt-oss (harmony): a message ``<|start|>assistant<|channel|>commentary to=functions.NAME
  <|constrain|>json<|message|>{..}<|call|>``; the recipient may also stand before
  ``<|channel|>``, and the first message of a reply has no ``<|start|>assistant`` (the prompt
  ended with it). Only ``commentary`` messages to ``functions.*`` are calls; an ``analysis``
  message is chain of thought and is cut from the text unread (as ``<think>`` is); a ``final``
  message (or a commentary preamble) stays visible without its tokens.

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
    "HARMONY_MARKER",
    "KIMI_MARKER",
    "SPECIAL_CALL_MARKER",
    "Scan",
    "harmony_message",
    "kimi_section",
    "special_tool_call",
    "unreadable_reason",
]

KIMI_MARKER = r"<\|tool_calls?_section_begin\|>"
SPECIAL_CALL_MARKER = r"<\|tool_call\|>"
HARMONY_MARKER = r"<\|start\|>|<\|channel\|>"

_KIMI_SECTION_END = re.compile(r"<\|tool_calls?_section_end\|>")
_KIMI_CALL_HEAD = re.compile(
    r"\s*<\|tool_call_begin\|>\s*([^\s<>]{1,200}?)\s*<\|tool_call_argument_begin\|>"
)
_KIMI_CALL_END = re.compile(r"<\|tool_call_end\|>")
# What may not come inside one call: the start of another call or section.
_KIMI_OPEN = re.compile(r"<\|tool_call_begin\|>|" + KIMI_MARKER)
_KIMI_INDEX = re.compile(r":\d{1,9}\Z")
_SPACE = re.compile(r"\s*")

_SPECIAL_OPEN = re.compile(SPECIAL_CALL_MARKER)
# Phi-4-mini closes its block; Granite ends the turn instead.
_SPECIAL_CLOSE = re.compile(r"<\|/tool_call\|>|<\|end_of_text\|>|<\|end\|>")
_PHI_CLOSE = "<|/tool_call|>"

_HARMONY_HEAD = re.compile(
    r"(?:<\|start\|>[ \t]*(?P<role>[A-Za-z_][\w.-]{0,63})?(?P<role_rest>[^<]{0,200}))?"
    r"<\|channel\|>[ \t]*(?P<channel>[A-Za-z_]{1,32})(?P<channel_rest>[^<]{0,200})"
    r"(?:<\|constrain\|>\s*(?P<constrain>[^<\s]{0,32})\s*)?"
    r"<\|message\|>"
)
_HARMONY_RECIPIENT = re.compile(r"(?:\A|\s)to=([^\s<]{1,200})")
# Before a bare <|channel|>: only the rest of the header the prompt's "<|start|>assistant" began.
_HARMONY_BARE_ROLE = re.compile(r"\s*(?:assistant)?(?:\s*to=(?P<to>[^\s<]{1,200}))?\s*")
_HARMONY_BARE_LOOKBACK = 256
_HARMONY_CALL_END = re.compile(r"<\|call\|>|<\|end\|>")
_HARMONY_END = re.compile(r"<\|(?:end|call|return)\|>")
_HARMONY_NEXT = re.compile(r"<\|(?:start|channel)\|>")

#: How much of an unreadable body is decoded again to say what is wrong with it, in characters.
_REASON_BUDGET = 100_000


class Find(Protocol):
    """The scanner's cached forward search."""

    def find(self, pos: int) -> re.Match[str] | None: ...


class Scan(Protocol):
    """What a handler may use of the scanner."""

    text: str
    harmony_floor: int

    def finder(self, pattern: re.Pattern[str]) -> Find: ...

    def charge(self, n: int) -> None: ...

    def cut(self, start: int, end: int) -> None: ...

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


def special_tool_call(scan: Scan, m: re.Match[str]) -> int:
    """``<|tool_call|>`` + JSON: Phi-4-mini (closed by ``<|/tool_call|>``) or Granite (unclosed)."""
    text = scan.text
    start = _SPACE.match(text, m.end())
    assert start is not None  # \s* always matches
    run = None
    if start.end() < len(text) and text[start.end()] in "{[":
        run = scan.json_run(start.end(), _SPECIAL_OPEN, closer=_SPECIAL_CLOSE)
    if run is not None and run.values:
        # Phi-4-mini closes the block; Granite has no closing token, so complete JSON right
        # after the token is the call, whatever follows it.
        after = _SPACE.match(text, run.end)
        assert after is not None
        close = _SPECIAL_CLOSE.match(text, after.end())
        end = close.end() if close is not None else run.end
        raw = text[m.start() : end]
        shape = "phi4_mini" if close is not None and close.group() == _PHI_CLOSE else "granite"
        calls: list[ParsedCall] = []
        for value in run.values:
            for item in value if isinstance(value, list) else [value]:
                call = _call_from_item(item, shape, raw)
                if call is not None:
                    calls.append(call)
        scan.accept(m.start(), end, calls)
        return end
    # Not readable: report it when its end is clear and it was meant as JSON.
    close = scan.finder(_SPECIAL_CLOSE).find(m.end())
    again = scan.finder(_SPECIAL_OPEN).find(m.end())
    body_end = close.start() if close is not None else len(text)
    if again is not None and again.start() < body_end:
        return m.end()
    body = text[m.end() : body_end]
    if not body.lstrip().startswith(("{", "[")) or (close is None and "<|" in body):
        return m.end()  # not meant as JSON, or unclosed with other tokens after it
    scan.charge(len(body))
    end = close.end() if close is not None else len(text)
    shape = "phi4_mini" if close is not None and close.group() == _PHI_CLOSE else "granite"
    name = re.search(r'"name"\s*:\s*"([a-zA-Z0-9_-]{1,64})"', body[:2000])
    reason = unreadable_reason(body)
    scan.report(
        m.start(),
        end,
        UnreadableCall(name.group(1) if name else "", reason, text[m.start() : end], shape),
    )
    return end


def _call_from_item(item: Any, shape: str, raw: str) -> ParsedCall | None:
    if not isinstance(item, dict) or not isinstance(item.get("name"), str):
        return None
    args = item["arguments"] if "arguments" in item else item.get("parameters")
    return make_call(item["name"], args, shape, raw)


def harmony_message(scan: Scan, m: re.Match[str]) -> int:
    """One gpt-oss harmony message: a call, chain of thought to cut, or text to show."""
    text = scan.text
    head = _HARMONY_HEAD.match(text, m.start())
    if head is None:
        return m.end()
    start = m.start()
    recipient = _recipient(head.group("role_rest") or "") or _recipient(head.group("channel_rest"))
    if head.group("role") is None and head.group("role_rest") is None:
        # A bare <|channel|>: the header may have begun before it, in the prompt's last line.
        floor = scan.harmony_floor
        if 0 <= m.start() - floor <= _HARMONY_BARE_LOOKBACK:
            before = _HARMONY_BARE_ROLE.fullmatch(text, floor, m.start())
            if before is not None and before.group("to"):
                recipient = recipient or before.group("to")
                start = floor + len(text[floor : m.start()]) - len(text[floor : m.start()].lstrip())
    channel = head.group("channel").lower()
    body = head.end()
    if channel == "analysis":
        # Chain of thought: never shown, never a call (as a <think> block).
        end = _message_end(scan, body)
        scan.cut(start, end)
        scan.harmony_floor = end
        return end
    if recipient is not None:
        if not recipient.startswith("functions."):
            return head.end()  # a built-in tool of another namespace (browser, python): not ours
        return _harmony_call(scan, start, head.end(), recipient.removeprefix("functions."))
    # final, or a commentary preamble: the text stays, its tokens go.
    scan.cut(start, head.end())
    end_token = scan.finder(_HARMONY_END).find(body)
    following = scan.finder(_HARMONY_NEXT).find(body)
    if end_token is not None and (following is None or end_token.start() < following.start()):
        scan.cut(end_token.start(), end_token.end())
        scan.harmony_floor = end_token.end()
    return head.end()


def _recipient(header_part: str) -> str | None:
    found = _HARMONY_RECIPIENT.search(header_part)
    return found.group(1) if found is not None else None


def _message_end(scan: Scan, body: int) -> int:
    """Where the message whose body starts at ``body`` ends (after its end token)."""
    end_token = scan.finder(_HARMONY_END).find(body)
    following = scan.finder(_HARMONY_NEXT).find(body)
    if end_token is not None and (following is None or end_token.start() < following.start()):
        return end_token.end()
    if following is not None:
        return following.start()
    return len(scan.text)


def _harmony_call(scan: Scan, start: int, body: int, name: str) -> int:
    text = scan.text
    block = scan.json_block(body, _HARMONY_CALL_END, _HARMONY_NEXT, seps="")
    if block is not None and len(block[0]) == 1:
        end = block[2]
        raw = text[start:end]
        call = make_call(name, block[0][0], "harmony", raw)
        scan.accept(start, end, [call] if call is not None else [])
        scan.harmony_floor = end
        return end
    end_token = scan.finder(_HARMONY_END).find(body)
    following = scan.finder(_HARMONY_NEXT).find(body)
    if end_token is None or (following is not None and following.start() < end_token.start()):
        return body  # no end: not a call we can read or report
    content = text[body : end_token.start()]
    scan.charge(len(content))
    raw = text[start : end_token.end()]
    if not content.strip():
        call = make_call(name, {}, "harmony", raw)
        scan.accept(start, end_token.end(), [call] if call is not None else [])
    else:
        scan.report(
            start, end_token.end(), UnreadableCall(name, unreadable_reason(content), raw, "harmony")
        )
    scan.harmony_floor = end_token.end()
    return end_token.end()

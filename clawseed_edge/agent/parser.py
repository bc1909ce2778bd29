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
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "MAX_INPUT_CHARS",
    "TOOL_NAME_RE",
    "ParsedCall",
    "parse_tool_calls",
    "split_thinking",
]

log = logging.getLogger(__name__)

MAX_INPUT_CHARS = 2_000_000
"""Texts longer than this (in characters) are returned stripped, with no call."""

TOOL_NAME_RE = re.compile(r"[a-zA-Z0-9_-]{1,64}")
"""What a tool name must fully match (what Anthropic, OpenAI and Ollama accept)."""


@dataclass(frozen=True, slots=True)
class ParsedCall:
    """One tool call read from model text.

    Attributes:
        name: The tool's name (already checked against :data:`TOOL_NAME_RE`).
        arguments: The decoded arguments, always a dict.
        raw: The markup the call was read from (a whole block when it held several calls).
        shape: Which markup it came in: ``tool_call``, ``invoke``, ``fence``, ``xai_fence``,
            ``mistral``, ``llama_function``, ``python_tag`` or ``deepseek``.
    """

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    raw: str = field(default="", compare=False, repr=False)
    shape: str = field(default="", compare=False)


# --- thinking ---------------------------------------------------------------------------------

_THINK_OPEN = re.compile(r"<(think|thinking)>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think(?:ing)?>", re.IGNORECASE)


def split_thinking(text: str) -> tuple[str, str]:
    """Split ``<think>``/``<thinking>`` blocks from text.

    A closing tag with no opening tag before it (chat templates that open the block in the
    prompt) ends a block that started at the beginning of the text; an opening tag that is
    never closed runs to the end of the text (a model stopped mid-thought).

    Returns:
        ``(visible_text, thinking)``: the text without the blocks (whitespace tidied where a
        block was cut) and the blocks' contents joined by blank lines.
    """
    cuts: list[tuple[int, int]] = []
    thoughts: list[str] = []
    pos = 0
    first_open = _THINK_OPEN.search(text)
    first_close = _THINK_CLOSE.search(text)
    if first_close is not None and (first_open is None or first_close.start() < first_open.start()):
        thoughts.append(text[: first_close.start()].strip())
        cuts.append((0, first_close.end()))
        pos = first_close.end()
    while True:
        m = _THINK_OPEN.search(text, pos)
        if m is None:
            break
        close = re.compile(f"</{m.group(1)}>", re.IGNORECASE).search(text, m.end())
        end_inner = close.start() if close is not None else len(text)
        end = close.end() if close is not None else len(text)
        thoughts.append(text[m.end() : end_inner].strip())
        cuts.append((m.start(), end))
        pos = end
    if not cuts:
        return text, ""
    return _join(text, cuts), "\n\n".join(t for t in thoughts if t)


# --- text assembly ----------------------------------------------------------------------------


def _join(text: str, cuts: list[tuple[int, int]]) -> str:
    """Remove the cut spans from text and tidy the whitespace where each cut was.

    Around a cut, the whitespace on both sides collapses to one separator: a space when there
    was no line break, else as many line breaks as the larger side had (at most two). Text
    between cuts is untouched; the result is stripped.
    """
    if not cuts:
        return text.strip()
    pieces: list[str] = []
    prev = 0
    for start, end in cuts:
        pieces.append(text[prev:start])
        prev = end
    pieces.append(text[prev:])
    last = len(pieces) - 1
    out: list[str] = []
    gap = 0
    for i, piece in enumerate(pieces):
        if i > 0:
            core = piece.lstrip()
            gap = max(gap, piece.count("\n", 0, len(piece) - len(core)))
            piece = core
        trail = 0
        if i < last:
            core = piece.rstrip()
            trail = piece.count("\n", len(core))
            piece = core
        if piece:
            if out:
                out.append("\n" * min(gap, 2) if gap else " ")
            out.append(piece)
            gap = 0
        gap = max(gap, trail)
    return "".join(out).strip()


# --- markup -----------------------------------------------------------------------------------

_BAR = "[|｜]"
_SP = "[▁_]"


def _ds(token: str) -> str:
    """A DeepSeek special token regex accepting fullwidth or ASCII bars, ▁ or _ separators."""
    return "<" + _BAR + _SP.join(token.split(" ")) + _BAR + ">"


# The lookahead lets the regex engine skip to candidate characters instead of trying every
# alternative at every position (about 8x faster on plain prose).
_MARKER = re.compile(
    r"(?=[<\[`])(?:"
    r"(?P<tool_call><tool[_-]?call>)"
    r"|(?P<minimax><minimax:tool_call>)"
    r"|(?P<function_calls><function_calls>)"
    r"|(?P<function><function=)"
    r"|(?P<python_tag><\|python_tag\|>)"
    r"|(?P<mistral>\[TOOL_CALLS\])"
    r"|(?P<deepseek>" + _ds("tool calls begin") + r")"
    r"|(?P<fence>```)"
    r"|(?P<result><(?P<result_tag>tool_result|tool_response|function_results|tool_outputs?)\b)"
    r"|(?P<ds_result>" + _ds("tool outputs begin") + "|" + _ds("tool output begin") + r"))",
    re.IGNORECASE,
)

_TOOL_CALL_OPEN = re.compile(r"<tool[_-]?call>", re.IGNORECASE)
_TOOL_CALL_CLOSE = re.compile(r"</tool[_-]?call>", re.IGNORECASE)
_MINIMAX_OPEN = re.compile(r"<minimax:tool_call>", re.IGNORECASE)
_MINIMAX_CLOSE = re.compile(r"</minimax:tool_call>", re.IGNORECASE)
_FUNCTION_CALLS_OPEN = re.compile(r"<function_calls>", re.IGNORECASE)
_FUNCTION_CALLS_CLOSE = re.compile(r"</function_calls>", re.IGNORECASE)
_FUNCTION_OPEN = re.compile(r"<function=", re.IGNORECASE)
_FUNCTION_HEAD = re.compile(r"<function=\s*[\"']?([^<>\"'\s]{1,128})[\"']?\s*>", re.IGNORECASE)
_FUNCTION_CLOSE = re.compile(r"</function>", re.IGNORECASE)
_PYTHON_TAG_END = re.compile(r"<\|python_tag\|>|<\|eom_id\|>|<\|eot_id\|>", re.IGNORECASE)
_LLAMA_EOM = re.compile(r"\s*<\|(?:eom_id|eot_id)\|>", re.IGNORECASE)
_MISTRAL_END = re.compile(r"\[TOOL_CALLS\]|</s>", re.IGNORECASE)
_MISTRAL_EOS = re.compile(r"\s*</s>", re.IGNORECASE)
_MISTRAL_NAME = re.compile(r"\s*([^\[\]{}\s]{1,128})")
_MISTRAL_EXTRA = re.compile(r"\s*(?:\[CALL_ID\]\s*[A-Za-z0-9_-]{0,64}|\[ARGS\])", re.IGNORECASE)
_DS_CALLS_CLOSE = re.compile(_ds("tool calls end"), re.IGNORECASE)
_DS_CALL_OPEN = re.compile(_ds("tool call begin"), re.IGNORECASE)
_DS_CALL_CLOSE = re.compile(_ds("tool call end"), re.IGNORECASE)
_DS_SEP = re.compile(_ds("tool sep"), re.IGNORECASE)
_DS_RESULT_CLOSE = re.compile(_ds("tool outputs end") + "|" + _ds("tool output end"), re.IGNORECASE)
_DS_OPEN = re.compile(_ds("tool calls begin"), re.IGNORECASE)
_FENCE_CLOSE = re.compile(r"^[ \t]{0,3}(`{3,})[ \t]*$", re.MULTILINE)
_INVOKE_HEAD = re.compile(r"<invoke\s+name\s*=\s*([\"'])([^\"'<>]{1,128})\1\s*>", re.IGNORECASE)
_INVOKE_OPEN = re.compile(r"<invoke\b", re.IGNORECASE)
_INVOKE_CLOSE = re.compile(r"</invoke>", re.IGNORECASE)
_PARAM_HEAD = re.compile(
    r"<parameter(?:\s+name\s*=\s*([\"'])([^\"'<>]{1,128})\1|=\s*([^<>\s]{1,128}))\s*>",
    re.IGNORECASE,
)
_PARAM_OPEN = re.compile(r"<parameter\b", re.IGNORECASE)
_PARAM_CLOSE = re.compile(r"</parameter>", re.IGNORECASE)
_GLM_NAME = re.compile(r"([^\s<>{}\[\]\"']{1,128})\s*")

_TOOL_CALL_FENCE_INFOS = frozenset({"tool_call", "tool-call", "toolcall", "tool_calls"})
_DECODER = json.JSONDecoder()
_WS = " \t\r\n"


class _Finder:
    """Finds the next match of a pattern at or after a position, in amortised linear time.

    A search is reused while the caller's position has not passed the match it found (or
    when it found nothing), so repeated openers without a closer cost one scan in total.
    """

    __slots__ = ("_from", "_match", "_pattern", "_text")

    def __init__(self, text: str, pattern: re.Pattern[str]) -> None:
        self._text = text
        self._pattern = pattern
        self._from = -1
        self._match: re.Match[str] | None = None

    def find(self, pos: int) -> re.Match[str] | None:
        m = self._match
        if 0 <= self._from <= pos and (m is None or m.start() >= pos):
            return m
        self._match = self._pattern.search(self._text, pos)
        self._from = pos
        return self._match


# --- decoding helpers (pure, bounded by the slice they get) -----------------------------------


def _decode_json(s: str) -> tuple[bool, Any]:
    """``json.loads`` that reports failure instead of raising (bad JSON, depth, huge ints)."""
    try:
        return True, json.loads(s)
    except (ValueError, RecursionError):
        return False, None


def _decode_run(s: str, seps: str) -> tuple[list[Any], int]:
    """JSON values from the start of ``s``, separated by whitespace or ``seps`` characters.

    Returns the values and the index just after the last one; stops at anything else.
    """
    values: list[Any] = []
    pos = end = 0
    n = len(s)
    while True:
        while pos < n and (s[pos] in _WS or (values and s[pos] in seps)):
            pos += 1
        try:
            value, pos = _DECODER.raw_decode(s, pos)
        except (ValueError, RecursionError):
            return values, end
        values.append(value)
        end = pos


def _decode_values(s: str) -> list[Any] | None:
    """One or more JSON values making up all of ``s``; None if anything else is there."""
    values, end = _decode_run(s, ",;")
    return values if values and not s[end:].strip() else None


def _call_from_obj(obj: Any, shape: str, raw: str) -> ParsedCall | None:
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
    return _make_call(name, args, shape, raw)


def _make_call(name: str, args: Any, shape: str, raw: str) -> ParsedCall | None:
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
            ok, args = _decode_json(args)
            if not ok:
                return None
    if not isinstance(args, dict):
        return None
    return ParsedCall(name, args, raw, shape)


def _calls_from_values(values: list[Any] | None, shape: str, raw: str) -> list[ParsedCall]:
    """Calls from decoded JSON values, each an object or a list of objects."""
    calls: list[ParsedCall] = []
    for value in values or ():
        items = value if isinstance(value, list) else [value]
        for item in items:
            call = _call_from_obj(item, shape, raw)
            if call is not None:
                calls.append(call)
    return calls


def _strip_inner_fence(s: str) -> str:
    """Content without a surrounding ```` ``` ```` fence (a model's ```` ```json ```` inside a wrapper)."""
    s = s.strip()
    if s.startswith("```") and s.endswith("```") and len(s) >= 6:
        nl = s.find("\n")
        if nl < 0:
            return s
        return s[nl + 1 : -3].strip()
    return s


def _param_value(raw_value: str) -> Any:
    """A parameter value: decoded when it is valid JSON, else the string itself."""
    stripped = raw_value.strip()
    if stripped:
        ok, value = _decode_json(stripped)
        if ok:
            return value
    value_str = raw_value
    if value_str.startswith("\n"):
        value_str = value_str[1:]
    if value_str.endswith("\n"):
        value_str = value_str[:-1]
    return value_str


def _parse_parameters(body: str) -> dict[str, Any] | None:
    """``<parameter name="p">v</parameter>`` (or ``<parameter=p>``) elements; None if malformed."""
    params: dict[str, Any] = {}
    pos = 0
    while True:
        m = _PARAM_OPEN.search(body, pos)
        if m is None:
            return params
        head = _PARAM_HEAD.match(body, m.start())
        if head is None:
            return None
        close = _PARAM_CLOSE.search(body, head.end())
        if close is None:
            return None
        key = head.group(2) if head.group(2) is not None else head.group(3)
        params[key] = _param_value(body[head.end() : close.start()])
        pos = close.end()


def _parse_invokes(content: str, shape: str, raw: str) -> list[ParsedCall] | None:
    """``<invoke name="X">..</invoke>`` elements; None if any is malformed."""
    calls: list[ParsedCall] = []
    pos = 0
    while True:
        m = _INVOKE_OPEN.search(content, pos)
        if m is None:
            return calls
        head = _INVOKE_HEAD.match(content, m.start())
        if head is None:
            return None
        close = _INVOKE_CLOSE.search(content, head.end())
        if close is None:
            return None
        params = _parse_parameters(content[head.end() : close.start()])
        if params is None:
            return None
        call = _make_call(head.group(2), params, shape, raw)
        if call is not None:
            calls.append(call)
        pos = close.end()


def _parse_function_elements(content: str, shape: str, raw: str) -> list[ParsedCall] | None:
    """Qwen3-Coder's ``<function=NAME><parameter=P>v</parameter></function>`` elements."""
    calls: list[ParsedCall] = []
    pos = 0
    while True:
        m = _FUNCTION_OPEN.search(content, pos)
        if m is None:
            return calls
        head = _FUNCTION_HEAD.match(content, m.start())
        close = _FUNCTION_CLOSE.search(content, m.end())
        if head is None or close is None or close.start() < head.end():
            return None
        call = _function_body(head.group(1), content[head.end() : close.start()], shape, raw)
        if call is None:
            return None
        calls.append(call)
        pos = close.end()


def _function_body(name: str, body: str, shape: str, raw: str) -> ParsedCall | None:
    """The body of ``<function=NAME>``: a JSON object or ``<parameter=..>`` elements."""
    stripped = _strip_inner_fence(body)
    if stripped.startswith("{") or not stripped:
        ok, args = _decode_json(stripped) if stripped else (True, {})
        return _make_call(name, args, shape, raw) if ok else None
    if stripped.startswith("<parameter"):
        params = _parse_parameters(stripped)
        return _make_call(name, params, shape, raw) if params is not None else None
    return None


def _is_json_content(content: str) -> bool:
    """Whether block content is JSON; only JSON can show that a block cut short is complete."""
    return _strip_inner_fence(content).startswith(("{", "["))


def _parse_glm(content: str, shape: str, raw: str) -> ParsedCall | None:
    """GLM-4.5's ``NAME <arg_key>k</arg_key><arg_value>v</arg_value>...``; None if malformed."""
    head = _GLM_NAME.match(content)
    if head is None:
        return None
    args: dict[str, Any] = {}
    pos = head.end()
    n = len(content)
    while pos < n:
        if not content.startswith("<arg_key>", pos):
            return None
        key_end = content.find("</arg_key>", pos)
        if key_end < 0:
            return None
        key = content[pos + len("<arg_key>") : key_end].strip()
        pos = key_end + len("</arg_key>")
        while pos < n and content[pos] in _WS:
            pos += 1
        if not content.startswith("<arg_value>", pos):
            return None
        value_end = content.find("</arg_value>", pos)
        if value_end < 0:
            return None
        args[key] = _param_value(content[pos + len("<arg_value>") : value_end])
        pos = value_end + len("</arg_value>")
        while pos < n and content[pos] in _WS:
            pos += 1
    return _make_call(head.group(1), args, shape, raw)


def _parse_json_block(content: str, shape: str, raw: str) -> list[ParsedCall]:
    """The content of a ``<tool_call>``-like block.

    JSON object(s) or a list of them; Qwen3-Coder's ``<function=..>`` elements; or GLM's
    ``NAME`` followed by ``<arg_key>``/``<arg_value>`` pairs.
    """
    stripped = _strip_inner_fence(content)
    if stripped.startswith(("{", "[")):
        return _calls_from_values(_decode_values(stripped), shape, raw)
    if stripped.lower().startswith("<function="):
        return _parse_function_elements(stripped, shape, raw) or []
    call = _parse_glm(stripped, shape, raw)
    return [call] if call is not None else []


# --- the scanner ------------------------------------------------------------------------------


class _Scanner:
    """One left-to-right pass over a text, collecting calls and the spans they came from."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.cuts: list[tuple[int, int]] = []
        self.calls: list[ParsedCall] = []
        self.budget = 8 * len(text) + 100_000
        self._finders: dict[str, _Finder] = {}

    def finder(self, pattern: re.Pattern[str]) -> _Finder:
        f = self._finders.get(pattern.pattern)
        if f is None:
            f = self._finders[pattern.pattern] = _Finder(self.text, pattern)
        return f

    def charge(self, n: int) -> None:
        self.budget -= n

    def accept(self, start: int, end: int, calls: list[ParsedCall]) -> bool:
        """Record calls read from ``text[start:end]`` and cut the span; False when there are none."""
        if not calls:
            return False
        self.cuts.append((start, end))
        self.calls.extend(calls)
        return True

    def run(self) -> None:
        text = self.text
        pos = 0
        marker = self.finder(_MARKER)
        handlers: dict[str, Callable[[re.Match[str]], int]] = {
            "tool_call": self._tool_call,
            "minimax": self._minimax,
            "function_calls": self._function_calls,
            "function": self._function,
            "python_tag": self._python_tag,
            "mistral": self._mistral,
            "deepseek": self._deepseek,
            "fence": self._fence,
            "result": self._result,
            "ds_result": self._ds_result,
        }
        while pos < len(text) and self.budget > 0:
            m = marker.find(pos)
            if m is None:
                return
            kind = m.lastgroup if m.lastgroup != "result_tag" else "result"
            new_pos = handlers[kind or "fence"](m)
            pos = max(new_pos, m.end())

    # Each handler gets the marker match and returns where scanning resumes.

    def _closed_region(
        self, m: re.Match[str], opener: re.Pattern[str], closer: re.Pattern[str]
    ) -> tuple[int, int, bool] | int:
        """``(content_end, block_end, closed)`` for a block opened at ``m``, or where to resume.

        When another opener of the same kind comes before the closer (a model that repeated
        the tag), this opener is left as text and scanning resumes at the inner one. An
        unclosed block counts only when it is the last of its kind (the model stopped before
        writing the closing tag).
        """
        close = self.finder(closer).find(m.end())
        inner = self.finder(opener).find(m.end())
        if inner is not None and (close is None or inner.start() < close.start()):
            return inner.start()
        if close is not None:
            return close.start(), close.end(), True
        return len(self.text), len(self.text), False

    def _tool_call(self, m: re.Match[str]) -> int:
        region = self._closed_region(m, _TOOL_CALL_OPEN, _TOOL_CALL_CLOSE)
        if isinstance(region, int):
            return region
        content_end, end, closed = region
        content = self.text[m.end() : content_end]
        if not closed and not _is_json_content(content):
            return m.end()
        self.charge(len(content))
        self.accept(
            m.start(), end, _parse_json_block(content, "tool_call", self.text[m.start() : end])
        )
        return end

    def _minimax(self, m: re.Match[str]) -> int:
        region = self._closed_region(m, _MINIMAX_OPEN, _MINIMAX_CLOSE)
        if isinstance(region, int):
            return region
        content_end, end, closed = region
        content = self.text[m.end() : content_end]
        if not closed and not _is_json_content(content):
            return m.end()
        raw = self.text[m.start() : end]
        self.charge(len(content))
        if _INVOKE_OPEN.search(content) is not None:
            calls = _parse_invokes(content, "invoke", raw) or []
        else:
            calls = _parse_json_block(content, "tool_call", raw)
        self.accept(m.start(), end, calls)
        return end

    def _function_calls(self, m: re.Match[str]) -> int:
        region = self._closed_region(m, _FUNCTION_CALLS_OPEN, _FUNCTION_CALLS_CLOSE)
        if isinstance(region, int):
            return region
        content_end, end, closed = region
        content = self.text[m.end() : content_end]
        self.charge(len(content))
        if not closed:
            # Cut by a stop sequence: accept when every <invoke> in it was completed.
            last_close = content.lower().rfind("</invoke>")
            if last_close < 0 or content[last_close + len("</invoke>") :].strip():
                return m.end()
        self.accept(
            m.start(), end, _parse_invokes(content, "invoke", self.text[m.start() : end]) or []
        )
        return end

    def _function(self, m: re.Match[str]) -> int:
        head = _FUNCTION_HEAD.match(self.text, m.start())
        if head is None:
            return m.end()
        region = self._closed_region(m, _FUNCTION_OPEN, _FUNCTION_CLOSE)
        if isinstance(region, int):
            return region
        content_end, end, closed = region
        if content_end < head.end():
            return m.end()
        body = self.text[head.end() : content_end]
        if not closed and not _is_json_content(body):
            return m.end()
        self.charge(len(body))
        raw = self.text[m.start() : end]
        call = _function_body(head.group(1), body, "llama_function", raw)
        self.accept(m.start(), end, [call] if call is not None else [])
        return end

    def _python_tag(self, m: re.Match[str]) -> int:
        bound_m = self.finder(_PYTHON_TAG_END).find(m.end())
        bound = bound_m.start() if bound_m is not None else len(self.text)
        region = self.text[m.end() : bound]
        self.charge(len(region))
        values, pos = _decode_run(region, ";")
        if not values:
            return m.end()
        end = m.end() + pos
        eom = _LLAMA_EOM.match(self.text, end)
        if eom is not None:
            end = eom.end()
        raw = self.text[m.start() : end]
        if self.accept(m.start(), end, _calls_from_values(values, "python_tag", raw)):
            return end
        return m.end()

    def _mistral(self, m: re.Match[str]) -> int:
        bound_m = self.finder(_MISTRAL_END).find(m.end())
        bound = bound_m.start() if bound_m is not None else len(self.text)
        region = self.text[m.end() : bound]
        self.charge(len(region))
        pos = len(region) - len(region.lstrip())
        calls: list[ParsedCall]
        if pos < len(region) and region[pos] in "[{":
            try:
                value, pos = _DECODER.raw_decode(region, pos)
            except (ValueError, RecursionError):
                return m.end()
            end = m.end() + pos
            calls = _calls_from_values([value], "mistral", self.text[m.start() : end])
        else:
            name_m = _MISTRAL_NAME.match(region, pos)
            if name_m is None:
                return m.end()
            pos = name_m.end()
            while (extra := _MISTRAL_EXTRA.match(region, pos)) is not None:
                pos = extra.end()
            while pos < len(region) and region[pos] in _WS:
                pos += 1
            if pos >= len(region) or region[pos] != "{":
                return m.end()
            try:
                args, pos = _DECODER.raw_decode(region, pos)
            except (ValueError, RecursionError):
                return m.end()
            end = m.end() + pos
            call = _make_call(name_m.group(1), args, "mistral", self.text[m.start() : end])
            calls = [call] if call is not None else []
        eos = _MISTRAL_EOS.match(self.text, end)
        if eos is not None:
            end = eos.end()
        if self.accept(m.start(), end, calls):
            return end
        return m.end()

    def _deepseek(self, m: re.Match[str]) -> int:
        region = self._closed_region(m, _DS_OPEN, _DS_CALLS_CLOSE)
        if isinstance(region, int):
            return region
        content_end, end, closed = region
        content = self.text[m.end() : content_end]
        self.charge(len(content))
        raw = self.text[m.start() : end]
        calls: list[ParsedCall] = []
        pos = 0
        while (begin := _DS_CALL_OPEN.search(content, pos)) is not None:
            close = _DS_CALL_CLOSE.search(content, begin.end())
            if close is None:
                return m.end()
            well_formed, call = _deepseek_call(content[begin.end() : close.start()], raw)
            if not well_formed:
                return m.end()  # one malformed call rejects the block; a bad name drops one
            if call is not None:
                calls.append(call)
            pos = close.end()
        if not closed and content[pos:].strip():
            return m.end()
        self.accept(m.start(), end, calls)
        return end

    def _fence(self, m: re.Match[str]) -> int:
        text = self.text
        start = m.start()
        # Only a fence at the start of a line (after at most three spaces) opens a block.
        back = start - 1
        while back >= 0 and start - back <= 4 and text[back] in " \t":
            back -= 1
        if back >= 0 and text[back] != "\n":
            return _skip_backticks(text, m.end())
        ticks_end = _skip_backticks(text, m.end())
        ticks = ticks_end - start
        eol = text.find("\n", ticks_end)
        if eol < 0:
            return len(text)  # a fence opener on the last line holds nothing
        info = text[ticks_end:eol].strip()
        close = _FENCE_CLOSE.search(text, eol + 1)
        while close is not None and len(close.group(1)) < ticks:
            close = _FENCE_CLOSE.search(text, close.end())
        content_end = close.start() if close is not None else len(text)
        end = close.end() if close is not None else len(text)
        words = info.split()
        first = words[0].lower() if words else ""
        if first not in _TOOL_CALL_FENCE_INFOS and first != "tool":
            return end  # an ordinary code block: never a call, whatever it holds
        content = text[eol + 1 : content_end]
        if close is None and not _is_json_content(content):
            return end
        self.charge(len(content))
        raw = text[start:end]
        if first == "tool" and len(words) == 2:
            call = _function_body(words[1], content, "xai_fence", raw)
            calls = [call] if call is not None else []
        elif first == "tool" and len(words) > 2:
            calls = []
        else:
            calls = _parse_json_block(content, "fence", raw)
        self.accept(start, end, calls)
        return end

    def _result(self, m: re.Match[str]) -> int:
        tag = (m.group("result_tag") or "").lower()
        closer = re.compile(f"</{tag}>", re.IGNORECASE)
        close = self.finder(closer).find(m.end())
        return close.end() if close is not None else len(self.text)

    def _ds_result(self, m: re.Match[str]) -> int:
        close = self.finder(_DS_RESULT_CLOSE).find(m.end())
        return close.end() if close is not None else len(self.text)


def _skip_backticks(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] == "`":
        pos += 1
    return pos


def _deepseek_call(body: str, raw: str) -> tuple[bool, ParsedCall | None]:
    """One DeepSeek call body: ``function<sep>NAME\\n```json{..}``` `` or ``NAME<sep>{..}``.

    Returns:
        ``(well_formed, call)``: call is None when the body is malformed or the name invalid.
    """
    sep = _DS_SEP.search(body)
    if sep is None:
        return False, None
    name = body[: sep.start()].strip()
    args_text = body[sep.end() :]
    if name.lower() in ("function", ""):
        stripped = args_text.lstrip()
        nl = stripped.find("\n")
        first_line = stripped[:nl].strip() if nl >= 0 else ""
        if first_line and not first_line.startswith(("{", "`")):
            name, args_text = first_line, stripped[nl + 1 :]
    args_text = _strip_inner_fence(args_text)
    ok, args = _decode_json(args_text) if args_text else (True, {})
    if not ok or not isinstance(args, dict):
        return False, None
    return True, _make_call(name, args, "deepseek", raw)


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
    if not isinstance(text, str):
        return "", []
    if len(text) > MAX_INPUT_CHARS:
        return text.strip(), []
    try:
        visible, _ = split_thinking(text)
        scanner = _Scanner(visible)
        scanner.run()
        return _join(visible, scanner.cuts), scanner.calls
    except Exception:  # a bug here must not end the turn: the text survives, no call runs
        log.exception("tool-call parser failed on a %d-character text", len(text))
        return text.strip(), []

"""The left-to-right scan that finds call wrappers in model text, for the tool-call parser.

:class:`CallScanner` looks for the markers of every shape :mod:`clawseed_edge.agent.toolcalls.parser`
recognises, hands each block's content to the body readers in
:mod:`~clawseed_edge.agent.toolcalls.elements`, and records the calls and the spans to cut. Closing
tags are found with cached forward searches (:class:`Finder`) and work is charged against a
budget, so a pass stays linear in the input.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .calls import (
    JSON_DECODER,
    WHITESPACE,
    JsonRun,
    ParsedCall,
    UnreadableCall,
    calls_from_values,
    decode_run,
    is_json_content,
    json_at,
    make_call,
)
from .elements import (
    FUNCTION_CLOSE,
    FUNCTION_HEAD,
    FUNCTION_OPEN,
    INVOKE_OPEN,
    deepseek_call,
    ds_token,
    function_body,
    parse_invokes,
    parse_json_block,
)
from .finder import Finder
from .token_formats import (
    HARMONY_MARKER,
    KIMI_MARKER,
    SPECIAL_CALL_MARKER,
    harmony_message,
    kimi_section,
    special_tool_call,
)

__all__ = ["CallScanner"]

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
    r"|(?P<deepseek>" + ds_token("tool calls begin") + r")"
    r"|(?P<kimi>" + KIMI_MARKER + r")"
    r"|(?P<special_call>" + SPECIAL_CALL_MARKER + r")"
    r"|(?P<harmony>" + HARMONY_MARKER + r")"
    r"|(?P<fence>```)"
    r"|(?P<inline>`{1,2})"
    r"|(?P<result><(?P<result_tag>tool_result|tool_response|function_results|tool_outputs?)\b)"
    r"|(?P<ds_result>"
    + ds_token("tool outputs begin")
    + "|"
    + ds_token("tool output begin")
    + r"))",
    re.IGNORECASE,
)
_TOOL_CALL_OPEN = re.compile(r"<tool[_-]?call>", re.IGNORECASE)
_TOOL_CALL_CLOSE = re.compile(r"</tool[_-]?call>", re.IGNORECASE)
_MINIMAX_OPEN = re.compile(r"<minimax:tool_call>", re.IGNORECASE)
_MINIMAX_CLOSE = re.compile(r"</minimax:tool_call>", re.IGNORECASE)
_FUNCTION_CALLS_OPEN = re.compile(r"<function_calls>", re.IGNORECASE)
_FUNCTION_CALLS_CLOSE = re.compile(r"</function_calls>", re.IGNORECASE)
_PYTHON_TAG_END = re.compile(r"<\|python_tag\|>|<\|eom_id\|>|<\|eot_id\|>", re.IGNORECASE)
_LLAMA_EOM = re.compile(r"\s*<\|(?:eom_id|eot_id)\|>", re.IGNORECASE)
_MISTRAL_END = re.compile(r"\[TOOL_CALLS\]|</s>", re.IGNORECASE)
_MISTRAL_EOS = re.compile(r"\s*</s>", re.IGNORECASE)
_MISTRAL_NAME = re.compile(r"\s*([^\[\]{}\s]{1,128})")
_MISTRAL_EXTRA = re.compile(r"\s*(?:\[CALL_ID\]\s*[A-Za-z0-9_-]{0,64}|\[ARGS\])", re.IGNORECASE)
_DS_CALLS_CLOSE = re.compile(ds_token("tool calls end"), re.IGNORECASE)
_DS_CALL_OPEN = re.compile(ds_token("tool call begin"), re.IGNORECASE)
_DS_CALL_CLOSE = re.compile(ds_token("tool call end"), re.IGNORECASE)
_DS_RESULT_CLOSE = re.compile(
    ds_token("tool outputs end") + "|" + ds_token("tool output end"), re.IGNORECASE
)
_DS_OPEN = re.compile(ds_token("tool calls begin"), re.IGNORECASE)
_FENCE_CLOSE = re.compile(r"^[ \t]{0,3}(`{3,})[ \t]*$", re.MULTILINE)

_INLINE_CLOSE = {
    1: re.compile(r"(?<!`)`(?!`)|\n"),
    2: re.compile(r"(?<!`)``(?!`)|\n"),
}
_SPACE = re.compile(r"\s*")
#: How many times a JSON slice may grow past an opener quoted inside one of its strings.
_STRING_EXTENSIONS = 3

_TOOL_CALL_FENCE_INFOS = frozenset({"tool_call", "tool-call", "toolcall", "tool_calls"})


class CallScanner:
    """One left-to-right pass over a text, collecting calls and the spans they came from."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.cuts: list[tuple[int, int]] = []
        self.calls: list[ParsedCall] = []
        self.unreadable: list[tuple[int, int, UnreadableCall]] = []
        self.harmony_floor = 0  # where the current harmony message's header may begin
        self.budget = 8 * len(text) + 100_000
        self._finders: dict[str, Finder] = {}

    def finder(self, pattern: re.Pattern[str]) -> Finder:
        f = self._finders.get(pattern.pattern)
        if f is None:
            f = self._finders[pattern.pattern] = Finder(self.text, pattern)
        return f

    def charge(self, n: int) -> None:
        self.budget -= n

    def json_run(
        self,
        pos: int,
        opener: re.Pattern[str],
        seps: str = ",;",
        closer: re.Pattern[str] | None = None,
    ) -> JsonRun:
        """The JSON values at ``pos`` (absolute positions), read before the next ``opener``.

        The JSON is read from a slice that ends at the next block of the same kind, so the work
        (and a decoding error's line count) stays within disjoint slices: linear in the text.
        When the slice ends inside a JSON string (a string that quotes the opener) and a
        ``closer`` follows, it is extended to the following opener, at most
        :data:`_STRING_EXTENSIONS` times.
        """
        text = self.text
        limit = pos
        run = JsonRun([], pos, "not valid JSON", pos)
        for _ in range(_STRING_EXTENSIONS + 1):
            following = self.finder(opener).find(limit)
            bound = following.start() if following is not None else len(text)
            piece = text[pos:bound]
            self.charge(len(piece))
            found = json_at(piece, 0, seps)
            run = JsonRun(found.values, pos + found.end, found.error, pos + found.reached)
            if found.values or following is None or "Unterminated string" not in found.error:
                return run
            if closer is None or self.finder(closer).find(following.end()) is None:
                return run  # no block end after the quoted opener: nothing to extend to
            limit = following.end()
        return run

    def json_block(
        self, pos: int, closer: re.Pattern[str] | None, opener: re.Pattern[str], seps: str = ",;"
    ) -> tuple[list[object], int, int] | None:
        """JSON values at ``pos`` that make up a whole block: ``(values, json_end, block_end)``.

        The values must be followed (after whitespace) by ``closer`` or by the end of the
        text (a model stopped by a stop sequence). The JSON is read first, so a closing tag
        inside one of its strings does not end the block. None when the block does not start
        with JSON or holds anything after it (then the caller reads it the older way).
        """
        text = self.text
        p = _SPACE.match(text, pos).end()  # type: ignore[union-attr]
        if p >= len(text) or text[p] not in "{[":
            return None
        if (
            closer is not None
            and self.finder(closer).find(p) is None
            and self.finder(opener).find(p) is not None
        ):
            return None  # never closed and not the last of its kind: text, without decoding
        run = self.json_run(p, opener, seps, closer)
        if not run.values:
            return None
        q = _SPACE.match(text, run.end).end()  # type: ignore[union-attr]
        if q >= len(text):
            return run.values, run.end, len(text)
        close = closer.match(text, q) if closer is not None else None
        if close is None:
            return None
        return run.values, run.end, close.end()

    def cut(self, start: int, end: int) -> None:
        """Cut ``text[start:end]`` from the visible text without a call (harmony's tokens)."""
        if start < end:
            self.cuts.append((start, end))

    def report(self, start: int, end: int, unreadable: UnreadableCall) -> None:
        """Record a closed block whose arguments could not be read (it stays in the text)."""
        self.unreadable.append((start, end, unreadable))

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
            "kimi": lambda m: kimi_section(self, m),
            "special_call": lambda m: special_tool_call(self, m),
            "harmony": lambda m: harmony_message(self, m),
            "fence": self._fence,
            "inline": self._inline,
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
        block = self.json_block(m.end(), _TOOL_CALL_CLOSE, _TOOL_CALL_OPEN)
        if block is not None:
            values, _, end = block
            raw = self.text[m.start() : end]
            self.accept(m.start(), end, calls_from_values(values, "tool_call", raw))
            return end
        region = self._closed_region(m, _TOOL_CALL_OPEN, _TOOL_CALL_CLOSE)
        if isinstance(region, int):
            return region
        content_end, end, closed = region
        content = self.text[m.end() : content_end]
        if not closed and not is_json_content(content):
            return m.end()
        self.charge(len(content))
        self.accept(
            m.start(), end, parse_json_block(content, "tool_call", self.text[m.start() : end])
        )
        return end

    def _minimax(self, m: re.Match[str]) -> int:
        block = self.json_block(m.end(), _MINIMAX_CLOSE, _MINIMAX_OPEN)
        if block is not None:
            values, _, end = block
            raw = self.text[m.start() : end]
            self.accept(m.start(), end, calls_from_values(values, "tool_call", raw))
            return end
        region = self._closed_region(m, _MINIMAX_OPEN, _MINIMAX_CLOSE)
        if isinstance(region, int):
            return region
        content_end, end, closed = region
        content = self.text[m.end() : content_end]
        if not closed and not is_json_content(content):
            return m.end()
        raw = self.text[m.start() : end]
        self.charge(len(content))
        if INVOKE_OPEN.search(content) is not None:
            calls = parse_invokes(content, "invoke", raw) or []
        else:
            calls = parse_json_block(content, "tool_call", raw)
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
            m.start(), end, parse_invokes(content, "invoke", self.text[m.start() : end]) or []
        )
        return end

    def _function(self, m: re.Match[str]) -> int:
        head = FUNCTION_HEAD.match(self.text, m.start())
        if head is None:
            return m.end()
        block = self.json_block(head.end(), FUNCTION_CLOSE, FUNCTION_OPEN, seps="")
        if block is not None and len(block[0]) == 1:
            values, _, end = block
            raw = self.text[m.start() : end]
            call = make_call(head.group(1), values[0], "llama_function", raw)
            self.accept(m.start(), end, [call] if call is not None else [])
            return end
        region = self._closed_region(m, FUNCTION_OPEN, FUNCTION_CLOSE)
        if isinstance(region, int):
            return region
        content_end, end, closed = region
        if content_end < head.end():
            return m.end()
        body = self.text[head.end() : content_end]
        if not closed and not is_json_content(body):
            return m.end()
        self.charge(len(body))
        raw = self.text[m.start() : end]
        call = function_body(head.group(1), body, "llama_function", raw)
        self.accept(m.start(), end, [call] if call is not None else [])
        return end

    def _python_tag(self, m: re.Match[str]) -> int:
        bound_m = self.finder(_PYTHON_TAG_END).find(m.end())
        bound = bound_m.start() if bound_m is not None else len(self.text)
        region = self.text[m.end() : bound]
        self.charge(len(region))
        values, pos = decode_run(region, ";")
        if not values:
            return m.end()
        end = m.end() + pos
        eom = _LLAMA_EOM.match(self.text, end)
        if eom is not None:
            end = eom.end()
        raw = self.text[m.start() : end]
        if self.accept(m.start(), end, calls_from_values(values, "python_tag", raw)):
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
                value, pos = JSON_DECODER.raw_decode(region, pos)
            except (ValueError, RecursionError):
                return m.end()
            end = m.end() + pos
            calls = calls_from_values([value], "mistral", self.text[m.start() : end])
        else:
            name_m = _MISTRAL_NAME.match(region, pos)
            if name_m is None:
                return m.end()
            pos = name_m.end()
            while (extra := _MISTRAL_EXTRA.match(region, pos)) is not None:
                pos = extra.end()
            while pos < len(region) and region[pos] in WHITESPACE:
                pos += 1
            if pos >= len(region) or region[pos] != "{":
                return m.end()
            try:
                args, pos = JSON_DECODER.raw_decode(region, pos)
            except (ValueError, RecursionError):
                return m.end()
            end = m.end() + pos
            call = make_call(name_m.group(1), args, "mistral", self.text[m.start() : end])
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
            well_formed, call = deepseek_call(content[begin.end() : close.start()], raw)
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
        if close is None and not is_json_content(content):
            return end
        self.charge(len(content))
        raw = text[start:end]
        if first == "tool" and len(words) == 2:
            call = function_body(words[1], content, "xai_fence", raw)
            calls = [call] if call is not None else []
        elif first == "tool" and len(words) > 2:
            calls = []
        else:
            calls = parse_json_block(content, "fence", raw)
        self.accept(start, end, calls)
        return end

    def _inline(self, m: re.Match[str]) -> int:
        # An inline code span (`...` or ``...`` on one line) is quoted text, never a call:
        # "Kimi writes `<|tool_call_begin|>...`" explains a format, it does not use one.
        close = self.finder(_INLINE_CLOSE[m.end() - m.start()]).find(m.end())
        if close is None or close.group() == "\n":
            return m.end()
        return close.end()

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

"""Call bodies inside a wrapper: XML-like elements, GLM pairs, JSON blocks, DeepSeek calls.

Helpers of :mod:`clawseed_edge.agent.toolcalls.parser`; each reads only the content it is given and
returns None (or no call) for malformed markup instead of raising.
"""

from __future__ import annotations

import re
from typing import Any

from .calls import (
    WHITESPACE,
    ParsedCall,
    calls_from_values,
    decode_json,
    decode_values,
    make_call,
    strip_inner_fence,
)

__all__ = [
    "FUNCTION_CLOSE",
    "FUNCTION_HEAD",
    "FUNCTION_OPEN",
    "INVOKE_OPEN",
    "deepseek_call",
    "ds_token",
    "function_body",
    "parse_invokes",
    "parse_json_block",
]

_BAR = "[|｜]"
_SP = "[▁_]"


def ds_token(token: str) -> str:
    """A DeepSeek special token regex accepting fullwidth or ASCII bars, ▁ or _ separators."""
    return "<" + _BAR + _SP.join(token.split(" ")) + _BAR + ">"


FUNCTION_OPEN = re.compile(r"<function=", re.IGNORECASE)
FUNCTION_HEAD = re.compile(r"<function=\s*[\"']?([^<>\"'\s]{1,128})[\"']?\s*>", re.IGNORECASE)
FUNCTION_CLOSE = re.compile(r"</function>", re.IGNORECASE)
_DS_SEP = re.compile(ds_token("tool sep"), re.IGNORECASE)
_INVOKE_HEAD = re.compile(r"<invoke\s+name\s*=\s*([\"'])([^\"'<>]{1,128})\1\s*>", re.IGNORECASE)
INVOKE_OPEN = re.compile(r"<invoke\b", re.IGNORECASE)
_INVOKE_CLOSE = re.compile(r"</invoke>", re.IGNORECASE)
_PARAM_HEAD = re.compile(
    r"<parameter(?:\s+name\s*=\s*([\"'])([^\"'<>]{1,128})\1|=\s*([^<>\s]{1,128}))\s*>",
    re.IGNORECASE,
)
_PARAM_OPEN = re.compile(r"<parameter\b", re.IGNORECASE)
_PARAM_CLOSE = re.compile(r"</parameter>", re.IGNORECASE)
_GLM_NAME = re.compile(r"([^\s<>{}\[\]\"']{1,128})\s*")


def _param_value(raw_value: str) -> Any:
    """A parameter value: decoded when it is valid JSON, else the string itself."""
    stripped = raw_value.strip()
    if stripped:
        ok, value = decode_json(stripped)
        if ok:
            return value
    value_str = raw_value
    if value_str.startswith("\n"):
        value_str = value_str[1:]
    if value_str.endswith("\n"):
        value_str = value_str[:-1]
    return value_str


def _elements(
    content: str, opener: re.Pattern[str], head: re.Pattern[str], closer: re.Pattern[str]
) -> list[tuple[re.Match[str], str]] | None:
    """Each ``<tag ...>body</tag>`` element in order: its head match and its body.

    The one element loop behind parameters, ``<invoke>`` and ``<function=..>``: an opener whose
    head does not parse, or that is never closed, makes the whole content malformed (None), so
    half-read markup never yields a call.
    """
    found: list[tuple[re.Match[str], str]] = []
    pos = 0
    while (m := opener.search(content, pos)) is not None:
        h = head.match(content, m.start())
        if h is None:
            return None
        close = closer.search(content, h.end())
        if close is None:
            return None
        found.append((h, content[h.end() : close.start()]))
        pos = close.end()
    return found


def _parse_parameters(body: str) -> dict[str, Any] | None:
    """``<parameter name="p">v</parameter>`` (or ``<parameter=p>``) elements; None if malformed."""
    elements = _elements(body, _PARAM_OPEN, _PARAM_HEAD, _PARAM_CLOSE)
    if elements is None:
        return None
    return {
        (h.group(2) if h.group(2) is not None else h.group(3)): _param_value(value)
        for h, value in elements
    }


def parse_invokes(content: str, shape: str, raw: str) -> list[ParsedCall] | None:
    """``<invoke name="X">..</invoke>`` elements; None if any is malformed."""
    elements = _elements(content, INVOKE_OPEN, _INVOKE_HEAD, _INVOKE_CLOSE)
    if elements is None:
        return None
    calls: list[ParsedCall] = []
    for head, body in elements:
        params = _parse_parameters(body)
        if params is None:
            return None
        call = make_call(head.group(2), params, shape, raw)
        if call is not None:  # an invalid name drops that call, not its neighbours
            calls.append(call)
    return calls


def _parse_function_elements(content: str, shape: str, raw: str) -> list[ParsedCall] | None:
    """Qwen3-Coder's ``<function=NAME><parameter=P>v</parameter></function>`` elements."""
    elements = _elements(content, FUNCTION_OPEN, FUNCTION_HEAD, FUNCTION_CLOSE)
    if elements is None:
        return None
    calls: list[ParsedCall] = []
    for head, body in elements:
        call = function_body(head.group(1), body, shape, raw)
        if call is None:  # unlike <invoke>, one bad function element spoils the block
            return None
        calls.append(call)
    return calls


def function_body(name: str, body: str, shape: str, raw: str) -> ParsedCall | None:
    """The body of ``<function=NAME>``: a JSON object or ``<parameter=..>`` elements."""
    stripped = strip_inner_fence(body)
    if stripped.startswith("{") or not stripped:
        ok, args = decode_json(stripped) if stripped else (True, {})
        return make_call(name, args, shape, raw) if ok else None
    if stripped.startswith("<parameter"):
        params = _parse_parameters(stripped)
        return make_call(name, params, shape, raw) if params is not None else None
    return None


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
        while pos < n and content[pos] in WHITESPACE:
            pos += 1
        if not content.startswith("<arg_value>", pos):
            return None
        value_end = content.find("</arg_value>", pos)
        if value_end < 0:
            return None
        args[key] = _param_value(content[pos + len("<arg_value>") : value_end])
        pos = value_end + len("</arg_value>")
        while pos < n and content[pos] in WHITESPACE:
            pos += 1
    return make_call(head.group(1), args, shape, raw)


def parse_json_block(content: str, shape: str, raw: str) -> list[ParsedCall]:
    """The content of a ``<tool_call>``-like block.

    JSON object(s) or a list of them; Qwen3-Coder's ``<function=..>`` elements; or GLM's
    ``NAME`` followed by ``<arg_key>``/``<arg_value>`` pairs.
    """
    stripped = strip_inner_fence(content)
    if stripped.startswith(("{", "[")):
        return calls_from_values(decode_values(stripped), shape, raw)
    if stripped.lower().startswith("<function="):
        return _parse_function_elements(stripped, shape, raw) or []
    call = _parse_glm(stripped, shape, raw)
    return [call] if call is not None else []


def deepseek_call(body: str, raw: str) -> tuple[bool, ParsedCall | None]:
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
    args_text = strip_inner_fence(args_text)
    ok, args = decode_json(args_text) if args_text else (True, {})
    if not ok or not isinstance(args, dict):
        return False, None
    return True, make_call(name, args, "deepseek", raw)

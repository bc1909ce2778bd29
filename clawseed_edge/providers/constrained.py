"""Constrained output for small local models: a reply that can only be an answer or a call.

With ``[provider] constrained = "on"`` (or ``"auto"`` for a local server running a small model
or one without native tools), the request carries one JSON schema (:func:`reply_schema`) whose
alternatives are ``{"answer": "..."}`` or ``{"tool": "<an offered tool>", "arguments": {...}}``
with that tool's own argument schema (device enums as the engine narrowed them to what the
policy allows, numbers within their bounds). Ollama takes it as ``format``; OpenAI-compatible
servers as ``response_format`` (``json_schema``, or llama.cpp's ``json_object`` + ``schema``).
:func:`parse_reply` turns the reply back into text or a call; a reply that does not parse is
:class:`ReplyInvalid` (the provider asks once more, then reports that the model did not answer).
"""

from __future__ import annotations

import ipaddress
import json
import re
import urllib.parse
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Literal

from clawseed_edge.api.errors import ProviderBadResponse
from clawseed_edge.api.events import StreamDone, StreamEvent, TextDelta, ToolCallReady
from clawseed_edge.api.types import ChatResponse, StopReason, ToolCall, ToolSpec, Usage

__all__ = [
    "MAX_ANSWER_CHARS",
    "ConstrainedMode",
    "ConstrainedPost",
    "ReplyInvalid",
    "ask_twice",
    "constrained_for",
    "did_not_answer",
    "instruction",
    "is_local_url",
    "is_small_model",
    "parse_reply",
    "refuses_format",
    "reply_schema",
    "stream_of",
    "with_instruction",
]

ConstrainedMode = Literal["auto", "on", "off"]
#: The longest plain answer kept from a reply.
MAX_ANSWER_CHARS = 2000
#: Models up to this many billion parameters count as small (0.5B-2B: they fail at native
#: tool calls most; 3B-4B models such as qwen2.5:3b mostly call tools well).
SMALL_MODEL_BILLIONS = 2.0
_SIZE = re.compile(r"(?<![a-z0-9.])(\d+(?:\.\d+)?)\s*([mb])(?![a-z])")


#: Sends one constrained request: (the reply's text, usage, model), or None when the server
#: refused the output-format field (the provider then sends the plain request).
ConstrainedPost = Callable[[], Awaitable[tuple[str, Usage, str] | None]]


class ReplyInvalid(ValueError):
    """A constrained reply that is neither an answer nor a call of an offered tool."""


def is_local_url(url: str | None) -> bool:
    """Whether ``url`` points at this machine or the local network (a server on the Pi)."""
    host = urllib.parse.urlsplit(url or "").hostname or ""
    if host in ("localhost", "") or host.endswith((".local", ".lan", ".home.arpa")):
        return bool(host)
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local


def is_small_model(model: str | None) -> bool:
    """Whether the model's name says it has at most 2B parameters ("qwen2.5:0.5b", "270m")."""
    for number, unit in _SIZE.findall((model or "").lower()):
        size = float(number) / (1000.0 if unit == "m" else 1.0)
        return size <= SMALL_MODEL_BILLIONS
    return False


def constrained_for(
    mode: str, *, base_url: str | None, model: str | None, native_tools: bool
) -> bool:
    """Whether to constrain the output: ``on``, ``off``, or ``auto`` (a local server with a
    small model or one without native tools)."""
    if mode == "on":
        return True
    if mode == "off":
        return False
    return is_local_url(base_url) and (is_small_model(model) or not native_tools)


def reply_schema(tools: Sequence[ToolSpec]) -> dict[str, Any]:
    """One JSON schema: a plain answer, or a call of one of ``tools`` with its own arguments."""
    answer = {
        "type": "object",
        # No maxLength: grammar builders unroll it into thousands of rules (llama.cpp took 30 s
        # per request); the answer is bounded by max_tokens and cut in parse_reply.
        "properties": {"answer": {"type": "string"}},
        "required": ["answer"],
        "additionalProperties": False,
    }
    calls = [
        {
            "type": "object",
            "properties": {
                "tool": {"type": "string", "enum": [spec.name]},
                "arguments": _closed(spec.parameters),
            },
            "required": ["tool", "arguments"],
            "additionalProperties": False,
        }
        for spec in tools
    ]
    return {"anyOf": [answer, *calls]}


def _closed(parameters: Mapping[str, Any]) -> dict[str, Any]:
    """A tool's parameters as a schema a grammar can enforce (an object, nothing extra)."""
    schema = dict(parameters) if parameters else {}
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    schema["additionalProperties"] = False
    return schema


def instruction(tools: Sequence[ToolSpec]) -> str:
    """The line that tells the model the reply format (sent with the schema)."""
    names = ", ".join(spec.name for spec in tools) or "none"
    return (
        'Reply with JSON only: {"answer": "<text for the user>"} to answer, or '
        '{"tool": "<name>", "arguments": {...}} to call one tool. Tools: ' + names + "."
    )


def parse_reply(text: str, tools: Sequence[ToolSpec]) -> tuple[str, tuple[ToolCall, ...]]:
    """(answer text, calls) from a constrained reply.

    Raises:
        ReplyInvalid: Not JSON, or neither an answer nor a call of an offered tool.
    """
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:  # RecursionError: nested past the limit
        cut = _CUT_ANSWER.match(text)
        if cut is not None and cut.group(1).strip():
            # The grammar held the answer branch and max_tokens cut it: an answer, cut short.
            return _unescape(cut.group(1))[:MAX_ANSWER_CHARS].rstrip() + " ...", ()
        raise ReplyInvalid(f"not JSON: {text[:80]!r}") from exc
    if isinstance(data, dict) and isinstance(data.get("answer"), str) and "tool" not in data:
        answer = data["answer"].strip()
        if answer:
            return answer[:MAX_ANSWER_CHARS], ()
        raise ReplyInvalid("an empty answer")
    offered = {spec.name for spec in tools}
    if isinstance(data, dict) and data.get("tool") in offered:
        arguments = data.get("arguments", {})
        if isinstance(arguments, dict):
            return "", (ToolCall(str(data["tool"]), arguments),)
    raise ReplyInvalid(f"neither an answer nor a call of an offered tool: {text[:80]!r}")


# A reply cut inside its answer string: '{"answer": "It is warm and'.
_CUT_ANSWER = re.compile(r'\A\s*\{\s*"answer"\s*:\s*"((?:[^"\\]|\\.)*)\\?\Z', re.DOTALL)


def _unescape(fragment: str) -> str:
    try:
        return str(json.loads(f'"{fragment}"'))
    except ValueError:
        return fragment


def with_instruction(messages: list[dict[str, Any]], tools: Sequence[ToolSpec]) -> None:
    """Put the reply-format line in front of the last user message (of this request only).

    Not in the system message: some chat templates drop it (llama-cpp-python's ``gemma``
    format does, since Gemma has no system role), and the model would never see the line.
    """
    line = instruction(tools)
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.get("role") == "user" and isinstance(message.get("content"), str):
            messages[index] = {**message, "content": f"{line}\n\n{message['content']}"}
            return
    messages.append({"role": "user", "content": line})


def refuses_format(status: int, detail: str) -> bool:
    """Whether an HTTP error says the server does not take the output-format field."""
    lowered = detail.lower()
    # llama-cpp-python's server answers an unknown response_format type with a 500 that
    # carries its validation error ("Input should be 'text' or 'json_object'").
    return status in (400, 422, 500, 501) and any(
        word in lowered for word in ("response_format", "json_schema", "schema", "format")
    )


async def stream_of(response: ChatResponse) -> AsyncIterator[StreamEvent]:
    """A whole constrained response as stream events (its JSON is never shown while it
    arrives: only the answer or the call it parses to)."""
    if response.text:
        yield TextDelta(response.text)
    for call in response.tool_calls:
        yield ToolCallReady(call)
    yield StreamDone(response)


def did_not_answer(provider: str, model: str, why: str) -> ProviderBadResponse:
    """The error for a reply that did not parse twice: never shown as an answer."""
    return ProviderBadResponse(
        f"the model did not answer: {provider} model '{model}' replied twice with something "
        f"that is neither an answer nor a call of an offered tool ({why}); ask again, or use "
        "a larger model",
        provider=provider,
        model=model,
    )


async def ask_twice(
    post: ConstrainedPost, tools: Sequence[ToolSpec], provider: str, model: str
) -> ChatResponse | None:
    """The response to a constrained request, asked once more if the reply does not parse.

    Returns None when the server refused the format. Raises what ``post`` raises, and
    :func:`did_not_answer` after two replies that did not parse.
    """
    why = ""
    for _attempt in range(2):
        reply = await post()
        if reply is None:
            return None
        content, usage, model = reply
        try:
            text, calls = parse_reply(content, tools)
        except ReplyInvalid as exc:
            why = str(exc)
            continue
        ids = tuple(replace(c, id=f"call_{i + 1}") for i, c in enumerate(calls))
        return ChatResponse(
            text=text,
            tool_calls=ids,
            usage=usage,
            stop_reason=StopReason.TOOL_USE if ids else StopReason.END_TURN,
            provider=provider,
            model=model,
        )
    raise did_not_answer(provider, model, why)

"""What the engine checks in a model's tool call before any hook sees it, and how it echoes.

Everything a model sends is bounded before it reaches the SecurityPolicy, a hook, a tool, the
history or a message back to the model:

- :func:`argument_problem`: a tool name no provider accepts (:func:`bounded_call` keeps such
  a call in history as ``invalid_tool_name`` with placeholder arguments), arguments a provider
  could not decode (the ``_invalid_arguments`` marker, see below), arguments larger than a
  character budget, or nested deeper than :data:`MAX_ARGUMENT_DEPTH`. The walk is iterative: a 10,000-deep value cannot exhaust the
  stack here (``json.dumps`` of it would).
- :class:`SchemaValidator`: the call's arguments against the tool's own JSON schema, compiled
  once per tool with fastjsonschema (imported on the first call: a process that never calls a
  tool never loads it), with the validator's message, which names the offending property.
- :func:`cap_echo`: every text that repeats model-supplied data back to it (a tool name, an
  argument, a denial reason, an exception message) is cut to a few hundred characters, with a
  note of how much was cut: a 10 MB argument echoed back costs the model 10 MB again.

Providers that receive arguments as a JSON string (OpenAI-compatible ones) mark a string that
is not a JSON object as ``{"_invalid_arguments": <text>, "_error": <why>}`` instead of failing
the turn; :func:`argument_problem` turns that marker into the message the model reads.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from clawseed_edge.api import Tool, ToolCall
from clawseed_edge.api.wording import FIX_OR_TELL, TOOL_BUG

__all__ = [
    "INVALID_ARGUMENTS_KEY",
    "MAX_ARGUMENT_DEPTH",
    "MAX_ECHO_CHARS",
    "MAX_NAME_ECHO_CHARS",
    "SchemaValidator",
    "argument_problem",
    "bounded_call",
    "cap_echo",
    "placeholder_arguments",
]

log = logging.getLogger(__name__)

#: The key a provider puts the undecodable argument text under (with ``_error``, its reason).
INVALID_ARGUMENTS_KEY = "_invalid_arguments"
#: How deep a call's arguments may nest (an object in an object ... counts each level).
MAX_ARGUMENT_DEPTH = 32
#: Longest echo of model-supplied text (a reason, an error, an argument) sent back, in characters.
MAX_ECHO_CHARS = 500
#: Longest echo of a tool name the model made up, in characters (real names have at most 64).
MAX_NAME_ECHO_CHARS = 80

#: What a tool name must be (what every provider accepts, and the registry enforces).
TOOL_NAME_RE = re.compile(r"[a-zA-Z0-9_-]{1,64}")
#: The name history keeps for a call whose name no provider would accept back.
INVALID_NAME = "invalid_tool_name"

Validate = Callable[[Any], Any]


def cap_echo(text: str, limit: int = MAX_ECHO_CHARS) -> str:
    """``text`` cut to ``limit`` characters, saying how many were cut; shorter text unchanged."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}[... {len(text) - limit:,} more characters cut]"


_SCALARS = frozenset((int, float, bool, type(None)))


def _flat_size(value: Any) -> int | None:
    """The size of a flat object of scalars (nearly every real call); None for anything else."""
    if type(value) is not dict:
        return None
    size = 0
    for key, inner in value.items():
        kind = type(inner)
        if type(key) is not str:
            return None
        if kind is str:
            size += len(key) + len(inner) + 6
        elif kind in _SCALARS:
            size += len(key) + 12
        else:
            return None
    return size


def _size_and_depth(value: Any, max_chars: int, max_depth: int) -> tuple[int, int]:
    """About how many characters ``value`` takes as JSON, and its depth; stops past a bound.

    Counts the characters of strings and keys plus a few per item: close to ``len(json.dumps)``
    for the bounds that matter, without building the string.
    """
    flat = _flat_size(value)
    if flat is not None:
        return flat, 1
    size = 0
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | Mapping):
            deepest = max(deepest, depth)
            for key, inner in item.items():
                size += len(str(key)) + 4
                stack.append((inner, depth + 1))
        elif isinstance(item, list | tuple):
            deepest = max(deepest, depth)
            size += 2
            stack.extend((inner, depth + 1) for inner in item)
        elif isinstance(item, str):
            size += len(item) + 2
        else:
            size += 8  # a number, a boolean or null
        if size > max_chars or deepest > max_depth:
            break  # already out of bounds: the rest of a 10 MB value need not be walked
    return size, deepest


def argument_problem(
    call: ToolCall, max_chars: int, max_depth: int = MAX_ARGUMENT_DEPTH
) -> str | None:
    """Why ``call``'s arguments cannot be used, in words the model can act on; None if they can.

    Args:
        call: The model's call.
        max_chars: The most characters its arguments may take as JSON.
        max_depth: The deepest nesting allowed.
    """
    args = call.arguments
    valid_name = TOOL_NAME_RE.fullmatch(call.name) is not None
    if valid_name and INVALID_ARGUMENTS_KEY not in args:
        size, depth = _size_and_depth(args, max_chars, max_depth)
        if size <= max_chars and depth <= max_depth:
            return None  # the common case, kept short: this runs for every call
    name = cap_echo(call.name, MAX_NAME_ECHO_CHARS)
    if not valid_name:
        return (
            f"unknown tool {name!r}: not a valid tool name (1 to 64 letters, digits, _ or -); "
            "the call was not run. Call one of the tools you were given, by its exact name."
        )
    if INVALID_ARGUMENTS_KEY in args:
        sent = str(args.get(INVALID_ARGUMENTS_KEY, ""))
        why = str(args.get("_error") or "they are not a JSON object")
        return (
            f"{cap_echo(why)}. You sent: {cap_echo(sent, 200)!r}. The call was not run; "
            f"call {name!r} again with its arguments as one valid JSON object."
        )
    size, depth = _size_and_depth(args, max_chars, max_depth)
    if depth > max_depth:
        return (
            f"the arguments of {name!r} nest more than {max_depth} levels deep; the call was "
            "not run. Send flat arguments as the tool's schema describes."
        )
    if size > max_chars:
        return (
            f"the arguments of {name!r} take more than {max_chars:,} characters (the limit of "
            "one call's arguments); the call was not run. Send less, e.g. in several calls."
        )
    return None


def placeholder_arguments(problem: str) -> dict[str, Any]:
    """What history keeps of arguments that were refused unread (never the payload itself)."""
    return {"_omitted": cap_echo(problem, 200)}


def bounded_call(call: ToolCall, problem: str | None) -> ToolCall:
    """``call`` as history and events keep it: unchanged, or, when ``problem`` refused it, with
    placeholder arguments and a name a provider accepts back (a 1 MB made-up name sent back in
    the next request would cost as much again, or be refused by the provider)."""
    if problem is None:
        return call
    name = call.name if TOOL_NAME_RE.fullmatch(call.name) else INVALID_NAME
    return replace(call, name=name, arguments=placeholder_arguments(problem))


def _schema_hint(schema: Mapping[str, Any]) -> str:
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return ""
    names = ", ".join(sorted(str(k) for k in properties)) or "none"
    required = schema.get("required")
    need = f" (required: {', '.join(str(r) for r in required)})" if required else ""
    return f" Its arguments: {names}{need}."


class SchemaValidator:
    """Checks a call's arguments against its tool's JSON schema, one compiled function per tool.

    The compiled function is cached per tool and rebuilt when the tool object or its
    ``parameters`` object changes (a GPIO tool rebuilds its schema when devices change).
    Validation never mutates the arguments (schema defaults are not filled in: a tool applies
    its own). A schema that does not compile refuses every call of that tool (fail closed),
    with a message naming the tool, and is logged once.

    Not thread-safe; the engine calls it from the event loop.
    """

    __slots__ = ("_cache",)

    def __init__(self) -> None:
        self._cache: dict[str, tuple[Tool, object, Validate | str]] = {}

    def compiled(self, tool: Tool) -> Validate | str:
        """The validation function of ``tool``'s schema, or why its schema cannot be used."""
        schema = tool.parameters
        cached = self._cache.get(tool.name)
        if cached is not None and cached[0] is tool and cached[1] is schema:
            return cached[2]
        fn = self._compile(tool.name, schema)
        self._cache[tool.name] = (tool, schema, fn)
        return fn

    @staticmethod
    def _compile(name: str, schema: Mapping[str, Any]) -> Validate | str:
        import fastjsonschema  # lazily: about 30 ms, paid at the first call only

        try:
            fn: Validate = fastjsonschema.compile(
                _plain(schema), use_default=False, detailed_exceptions=True
            )
        except Exception as exc:  # JsonSchemaDefinitionException, or a schema it chokes on
            log.error("the parameter schema of tool %r does not compile: %s", name, exc)
            return (
                f"tool {name!r} has an invalid parameter schema ({cap_echo(str(exc), 200)}), "
                f"so its calls cannot be checked and are refused. {TOOL_BUG}"
            )
        return fn

    def problem(self, tool: Tool, call: ToolCall) -> str | None:
        """What is wrong with ``call``'s arguments for ``tool``, for the model; None if valid."""
        fn = self.compiled(tool)
        if isinstance(fn, str):
            return fn
        args = call.arguments
        try:
            fn(args if type(args) is dict else dict(args))
        except ValueError as exc:  # fastjsonschema's errors are ValueErrors; imported only here
            import fastjsonschema

            if not isinstance(exc, fastjsonschema.JsonSchemaValueException):
                raise
            message = str(exc.message)
            if message.startswith("data"):
                message = "arguments" + message[len("data") :]
            return (
                f"the arguments of {call.name!r} do not match its schema: {cap_echo(message)}. "
                f"The call was not run.{_schema_hint(tool.parameters)} {FIX_OR_TELL}"
            )
        return None


def _plain(value: Any) -> Any:
    """A schema as plain dicts and lists (tools may declare it with read-only mappings)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value

"""The ``/ws/chat`` protocol of the ClawSeed Android client, as pure functions.

Client -> server frames are parsed and bounded by :func:`parse_client_frame` into small typed
objects (no I/O here; frozen msgspec Structs, which cost a fraction of a dataclass to define at
start-up); server -> client frames are built by the ``*_frame`` functions and by
:func:`turn_event_frame`, which maps the engine's turn events to the Android client's names
(``chunk{content}``, ``done{full_response}`` ...). docs/gateway.md lists every frame.
"""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec

from clawseed_edge.api import (
    AbortedEvent,
    ChunkEvent,
    DoneEvent,
    ErrorEvent,
    ThinkingEvent,
    ToolCallEvent,
    ToolResultEvent,
    TurnEvent,
)
from clawseed_edge.api.wording import for_people

from .errors import ClientError
from .limits import clip, loads_bounded
from .pictures import result_pictures

__all__ = [
    "AbortFrame",
    "ApprovalResponseFrame",
    "ClientFrame",
    "FrameLimits",
    "MessageFrame",
    "RegenerateFrame",
    "RegisterToolsFrame",
    "RemoteToolSpec",
    "ToolResultFrame",
    "error_frame",
    "parse_client_frame",
    "turn_event_frame",
]

CLIENT_TYPES = (
    "message", "register_tools", "tool_result", "tool_error", "regenerate", "abort",
    "approval_response",
)  # fmt: skip
_TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_ID = re.compile(r"[A-Za-z0-9_.:-]{1,64}")
#: What we send back of a tool's output or arguments in informational frames.
ECHO_OUTPUT_CHARS = 4000


class FrameLimits(msgspec.Struct, frozen=True):
    """What one client frame may hold (from ``[gateway]``)."""

    max_frame_bytes: int = 65536
    max_message_chars: int = 16000
    max_remote_tools: int = 32
    max_tool_schema_bytes: int = 8192
    max_description_chars: int = 1024
    max_output_chars: int = 65536


class MessageFrame(msgspec.Struct, frozen=True):
    content: str


class RemoteToolSpec(msgspec.Struct, frozen=True):
    """A tool the client offers: ``risk`` is ``read`` or ``act`` (default ``act``: a tool we
    cannot see into is treated as one that acts)."""

    name: str
    description: str
    parameters: dict[str, Any]
    risk: str = "act"


class RegisterToolsFrame(msgspec.Struct, frozen=True):
    """The tools offered; ``rejected`` names the ones refused already (one bad tool rejects
    only itself), each ``{"name", "code", "reason"}``."""

    tools: tuple[RemoteToolSpec, ...]
    rejected: tuple[dict[str, str], ...] = ()


class ToolResultFrame(msgspec.Struct, frozen=True):
    """``tool_result`` (success) or ``tool_error`` (failure) for a ``tool_call_request``."""

    id: str
    success: bool
    output: str = ""
    error: str = ""


class RegenerateFrame(msgspec.Struct, frozen=True):
    pass


class AbortFrame(msgspec.Struct, frozen=True):
    pass


class ApprovalResponseFrame(msgspec.Struct, frozen=True):
    id: str
    approved: bool
    reason: str = ""


ClientFrame = (
    MessageFrame
    | RegisterToolsFrame
    | ToolResultFrame
    | RegenerateFrame
    | AbortFrame
    | ApprovalResponseFrame
)


def _bad(code: str, message: str) -> ClientError:
    return ClientError(code, message)


def _text(value: object, field: str, kind: str, limit: int, *, required: bool = True) -> str:
    if value is None and not required:
        return ""
    if isinstance(value, int | float) and not isinstance(value, bool):
        value = str(value)  # a number as a tool's output is fine
    if not isinstance(value, str):
        raise _bad("frame_invalid", f"'{kind}' needs '{field}' as a string")
    if len(value) > limit:
        raise _bad(
            "too_large",
            f"'{kind}'.{field} has {len(value)} characters, over the limit of {limit}; send less",
        )
    return value


def _frame_id(value: object, kind: str) -> str:
    if not isinstance(value, str) or _ID.fullmatch(value) is None:
        raise _bad(
            "frame_invalid",
            f"'{kind}' needs 'id' as the id of the request it answers (1-64 of A-Z a-z 0-9 _.:-), "
            f"got {clip(repr(value), 40)}",
        )
    return value


def _tool_spec(item: object, index: int, limits: FrameLimits) -> RemoteToolSpec:
    where = f"register_tools.tools[{index}]"
    if not isinstance(item, dict):
        raise _bad("frame_invalid", f"{where} must be an object with name, description, parameters")
    name = item.get("name")
    if not isinstance(name, str) or _TOOL_NAME.fullmatch(name) is None:
        raise _bad(
            "tool_name_invalid",
            f"{where}.name {clip(repr(name), 70)} is not a valid tool name: use 1-64 letters, "
            "digits, '_' or '-'",
        )
    description = _text(
        item.get("description", ""), "description", where, limits.max_description_chars
    )
    parameters = item.get("parameters", {"type": "object", "properties": {}})
    if isinstance(parameters, str):
        # The Android SDK sends the schema as a JSON string; accept both forms.
        parameters = loads_bounded(parameters, max_bytes=limits.max_tool_schema_bytes)
    if not isinstance(parameters, dict):
        raise _bad("frame_invalid", f"{where}.parameters must be a JSON schema object")
    size = len(json.dumps(parameters))
    if size > limits.max_tool_schema_bytes:
        raise _bad(
            "too_large",
            f"{where} ({name}) has a {size}-byte schema, over the limit of "
            f"{limits.max_tool_schema_bytes}; describe the arguments more briefly",
        )
    risk = item.get("risk", "act")
    if risk not in ("read", "act"):
        raise _bad(
            "frame_invalid", f"{where}.risk must be 'read' or 'act', got {clip(repr(risk), 30)}"
        )
    return RemoteToolSpec(name, description, parameters, risk)


def _output_text(value: object, kind: str, limits: FrameLimits) -> object:
    """A tool's output as text: an object or a list (the Android SDK sends them) is
    JSON-encoded; the frame size already bounds its depth and size."""
    if isinstance(value, dict | list | bool):
        return json.dumps(value, ensure_ascii=False)
    return value


def parse_client_frame(raw: str | bytes, limits: FrameLimits) -> ClientFrame:
    """One client frame, bounded and typed.

    Raises:
        ClientError: The frame is too large, not JSON, not an object, of an unknown type, or a
            field is missing or out of bounds; the message says which and what to send instead.
    """
    data = loads_bounded(raw, max_bytes=limits.max_frame_bytes)
    if not isinstance(data, dict):
        raise _bad("frame_invalid", 'a frame must be a JSON object like {"type": "message", ...}')
    kind = data.get("type")
    if kind == "message":
        content = _text(data.get("content"), "content", "message", limits.max_message_chars)
        if not content.strip():
            raise _bad("frame_invalid", "'message' needs a non-empty 'content'")
        return MessageFrame(content)
    if kind == "register_tools":
        tools = data.get("tools")
        if not isinstance(tools, list):
            raise _bad("frame_invalid", "'register_tools' needs 'tools' as a list")
        if len(tools) > limits.max_remote_tools:
            raise _bad(
                "too_many_tools",
                f"{len(tools)} tools offered, over the limit of {limits.max_remote_tools}; "
                "register fewer ([gateway] max_remote_tools)",
            )
        specs: list[RemoteToolSpec] = []
        rejected: list[dict[str, str]] = []
        for i, item in enumerate(tools):
            try:
                spec = _tool_spec(item, i, limits)
            except ClientError as exc:
                name = item.get("name") if isinstance(item, dict) else None
                label = clip(name, 64) if isinstance(name, str) else f"tools[{i}]"
                rejected.append({"name": label, "code": exc.code, "reason": str(exc)})
                continue
            if any(s.name == spec.name for s in specs):
                rejected.append(
                    {
                        "name": spec.name,
                        "code": "frame_invalid",
                        "reason": "named twice in the list",
                    }
                )
                continue
            specs.append(spec)
        return RegisterToolsFrame(tuple(specs), tuple(rejected))
    if kind in ("tool_result", "tool_error"):
        frame_id = _frame_id(data.get("id"), kind)
        success = kind == "tool_result" and data.get("success", True) is not False
        output = _text(
            _output_text(data.get("output", ""), kind, limits),
            "output",
            kind,
            limits.max_output_chars,
            required=False,
        )
        error = _text(data.get("error", ""), "error", kind, limits.max_output_chars, required=False)
        if not success and not error:
            error = output or "the client reported a failure without a reason"
        return ToolResultFrame(frame_id, success, output, error)
    if kind == "regenerate":
        return RegenerateFrame()
    if kind == "abort":
        return AbortFrame()
    if kind == "approval_response":
        approved = data.get("approved")
        if not isinstance(approved, bool):
            raise _bad("frame_invalid", "'approval_response' needs 'approved' as true or false")
        reason = _text(data.get("reason", ""), "reason", kind, 500, required=False)
        return ApprovalResponseFrame(_frame_id(data.get("id"), kind), approved, reason)
    known = ", ".join(CLIENT_TYPES)
    raise _bad(
        "frame_unknown",
        f"unknown frame type {clip(repr(kind), 40)}; this server understands: {known}",
    )


# --- server -> client ---------------------------------------------------------------------


def error_frame(code: str, message: str) -> dict[str, Any]:
    return {"type": "error", "code": code, "message": message}


def _echo(value: Any) -> Any:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return value if len(text) <= ECHO_OUTPUT_CHARS else clip(text, ECHO_OUTPUT_CHARS)


def turn_event_frame(event: TurnEvent) -> dict[str, Any] | None:
    """The frame for one turn event, or None for events sent another way (approvals go to
    every paired client through the approval broker, not only to the turn's own client)."""
    if isinstance(event, ChunkEvent):
        return {"type": "chunk", "content": event.text}
    if isinstance(event, ThinkingEvent):
        return {"type": "thinking", "content": event.text}
    if isinstance(event, ToolCallEvent):
        call = event.call
        return {
            "type": "tool_call",
            "id": call.id,
            "name": call.name,
            "arguments": _echo(dict(call.arguments)),
        }
    if isinstance(event, ToolResultEvent):
        result = event.result
        pictures = result_pictures(result.images, result.data)
        frame = {
            "type": "tool_result",
            "id": event.call.id,
            "name": event.call.name,
            "success": result.success,
            "output": clip(result.output, ECHO_OUTPUT_CHARS)
            if len(result.output) > ECHO_OUTPUT_CHARS
            else result.output,
            "error": None if result.error is None else for_people(result.error),
        }
        if pictures:  # a snapshot: its stored file's URL, never its bytes
            frame["pictures"] = pictures
        return frame
    if isinstance(event, DoneEvent):
        return {"type": "done", "full_response": event.text}
    if isinstance(event, AbortedEvent):
        return {"type": "aborted", "reason": event.reason}
    if isinstance(event, ErrorEvent):
        return error_frame(event.code, event.message)
    return None

"""What a person is shown of a stored session: one window, one count, titles without stamps.

``session_start.messageCount``, ``GET /api/sessions`` and ``GET /api/sessions/{id}`` all read
:func:`shown_messages`, so the three agree: the user and assistant messages with text among the
newest :data:`READ_MESSAGES` stored, the last :data:`SHOWN_MESSAGES` of them. An answer
carries its turn's tool calls (``tools``: name, arguments, success, output, error, and a
snapshot's ``pictures`` URLs; bounded) so a client can draw its tool cards again after a reload.
"""

from __future__ import annotations

import json
import re
from typing import Any

from clawseed_edge.api import SessionStore

from .pictures import stored_pictures

__all__ = ["SHOWN_MESSAGES", "shown_messages", "shown_title", "split_time_prefix"]

#: Messages shown of a session, each cut to a length; stored messages read to find them.
SHOWN_MESSAGES = 200
SHOWN_MESSAGE_CHARS = 8000
READ_MESSAGES = 4 * SHOWN_MESSAGES
#: Tool calls kept with one answer (for its tool cards), and what is kept of each.
SHOWN_TOOLS = 20
SHOWN_TOOL_CHARS = 500
_TIME_PREFIX = re.compile(r"\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d (?:[A-Za-z]{1,6}|[+-]\d{4}))\] ")


def split_time_prefix(text: str) -> tuple[str | None, str]:
    """The engine's time stamp on a user message (for the model), and the words after it."""
    stamp = _TIME_PREFIX.match(text)
    if stamp is None:
        return None, text
    return stamp.group(1), text[stamp.end() :]


def shown_title(title: str) -> str:
    """A session's title (its first message) without the engine's time stamp."""
    return split_time_prefix(title)[1].strip()


def _shown(role: str, content: str) -> dict[str, Any]:
    # A person sees the time apart from the words.
    entry: dict[str, Any] = {"role": role}
    if role == "user":
        stamp, content = split_time_prefix(content)
        if stamp is not None:
            entry["time"] = stamp
    if len(content) > SHOWN_MESSAGE_CHARS:
        content = content[: SHOWN_MESSAGE_CHARS - 3] + "..."
    entry["content"] = content
    return entry


async def shown_messages(store: SessionStore, session_id: str) -> list[dict[str, Any]]:
    """The session's messages as a person is shown them (see the module docstring).

    Raises what the store raises. Safe to cancel.
    """
    history = await store.load_history(session_id, limit=READ_MESSAGES)
    messages: list[dict[str, Any]] = []
    arguments: dict[str, Any] = {}
    tools: list[dict[str, Any]] = []
    for m in history:
        if m.role == "assistant":
            for call in m.tool_calls:
                arguments[call.id] = call.arguments
        if m.role == "tool" and len(tools) < SHOWN_TOOLS:
            # The tool calls of a turn go with its answer, so its tool cards survive a reload.
            tools.append(_shown_tool(m.name or "", m.content, arguments.get(m.tool_call_id or "")))
        if m.role == "user":
            tools = []  # calls of a turn that ended without an answer
        if m.role in ("user", "assistant") and m.content.strip():
            entry = _shown(m.role, m.content)
            if m.role == "assistant" and tools:
                entry["tools"] = tools
                tools = []
            messages.append(entry)
    return messages[-SHOWN_MESSAGES:]


def _shown_tool(name: str, content: str, arguments: Any) -> dict[str, Any]:
    # The engine stores a failure as "Error: ..." (ToolResult.as_text).
    failed = content.startswith("Error: ")
    text = content[len("Error: ") :] if failed else content
    if len(text) > SHOWN_TOOL_CHARS:
        text = text[: SHOWN_TOOL_CHARS - 3] + "..."
    shown_args = arguments if arguments is not None else {}
    if len(json.dumps(shown_args, default=str)) > SHOWN_TOOL_CHARS:
        shown_args = {}
    shown = {
        "name": name,
        "arguments": shown_args,
        "success": not failed,
        "output": "" if failed else text,
        "error": text if failed else "",
    }
    pictures = [] if failed else stored_pictures(name, content)
    if pictures:  # a snapshot's card shows its picture again (while the store keeps it)
        shown["pictures"] = pictures
    return shown

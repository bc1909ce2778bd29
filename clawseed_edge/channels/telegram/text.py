"""What Telegram shows: long answers split on line boundaries, tool activity as a short line.

Messages are sent as plain text (no parse mode), so nothing a model writes can break the
markup or inject a link: there is nothing to escape.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["MAX_MESSAGE_CHARS", "approval_text", "asked_by", "split_message", "tool_line"]

#: Telegram's limit on one message's text.
MAX_MESSAGE_CHARS = 4096
#: The longest tool-activity line.
TOOL_LINE_CHARS = 120


def split_message(text: str, limit: int = MAX_MESSAGE_CHARS) -> list[str]:
    """``text`` cut into messages of at most ``limit`` characters, at line boundaries where a
    line fits (a longer line is cut where the limit falls). Empty text gives no message."""
    if limit < 1:
        raise ValueError("limit must be at least 1")
    parts: list[str] = []
    current = ""
    for line in text.split("\n"):
        while len(line) > limit:
            if current:
                parts.append(current)
                current = ""
            parts.append(line[:limit])
            line = line[limit:]
        candidate = line if not current else f"{current}\n{line}"
        if len(candidate) <= limit:
            current = candidate
        else:
            parts.append(current)
            current = line
    if current.strip():
        parts.append(current)
    return [p for p in parts if p.strip()]


def tool_line(name: str, arguments: Mapping[str, Any]) -> str:
    """``⚙ gpio_switch device=porch_light on=True`` (capped)."""
    args = " ".join(f"{k}={_short(v)}" for k, v in list(arguments.items())[:6])
    line = f"⚙ {name} {args}".rstrip()
    if len(line) > TOOL_LINE_CHARS:
        line = line[: TOOL_LINE_CHARS - 1] + "…"
    return line


def _short(value: Any) -> str:
    text = str(value).replace("\n", " ")
    return text if len(text) <= 30 else text[:29] + "…"


def approval_text(frame: Mapping[str, Any]) -> str:
    """The approval message: what would run, on which device, with which value."""
    lines = ["Approval needed"]
    device = frame.get("device")
    action = frame.get("action") or frame.get("tool")
    value = frame.get("value")
    if device is not None:
        lines.append(f"Device: {device}")
    lines.append(f"Action: {action}")
    if value is not None:
        lines.append(f"Value: {value}")
    summary = frame.get("summary")
    if summary and summary != action:
        lines.append(str(summary)[:300])
    who = asked_by(str(frame.get("session_id") or ""))
    if who:
        lines.append(f"Asked by: {who}")
    return "\n".join(lines)[:1000]


#: Session id prefixes and who they stand for (the places that make them: the Telegram
#: channel, the fleet calls, the MQTT channel, the HTTP API, the scheduler).
_ASKERS = (
    ("telegram-", "a Telegram chat"),
    ("fleet-", "the fleet node {rest}"),
    ("mqtt-", "Home Assistant (MQTT)"),
    ("api-", "the HTTP API"),
    ("job-", "the scheduled job {rest}"),
    ("automation", "an automation"),
)


def asked_by(session_id: str) -> str:
    """Who an approval request comes from, in words, from its session id ("" when unknown)."""
    for prefix, who in _ASKERS:
        if session_id.startswith(prefix):
            rest = session_id[len(prefix) :][:40]
            if prefix == "telegram-":
                return f"{who} ({rest.split('-')[0]})"
            return who.format(rest=rest)
    return f"the session {session_id[:40]}" if session_id else ""

"""Conversation history per session: ChatMessage <-> JSON rows, titles, the SessionStore half."""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any

from clawseed_edge.api import ChatMessage, MemoryStoreError, Redactor, SessionInfo, ToolCall

__all__ = [
    "SAFE_ARGUMENT_KEYS",
    "SAFE_VALUE_CHARS",
    "TITLE_LENGTH",
    "SessionMethods",
    "message_from_json",
    "message_to_json",
    "prune_session_messages",
    "title_for",
]

log = logging.getLogger(__name__)

TITLE_LENGTH = 60
#: Top-level keys, and characters per string value, kept of unstorable tool-call arguments.
SAFE_ARGUMENT_KEYS = 20
SAFE_VALUE_CHARS = 200


def message_to_json(message: ChatMessage) -> str:
    """One message as a compact JSON object (empty fields left out).

    Never raises for a message's contents: tool-call arguments that JSON cannot encode (nested
    too deep, not JSON types, non-finite numbers) are replaced by a bounded summary with a
    ``_note`` saying so, and a warning is logged, so that the rest of the conversation is
    still saved.
    """
    data = _message_data(message, safe=False)
    try:
        return _dumps(data)
    except (RecursionError, ValueError, TypeError) as exc:
        log.warning(
            "session message (%s) could not be stored as it is (%s); storing a summary",
            message.role,
            type(exc).__name__,
        )
        return _dumps(_message_data(message, safe=True, reason=_reason(exc)))


def _dumps(data: dict[str, Any]) -> str:
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # a lone surrogate (a broken paste) cannot be stored as UTF-8; \u escapes can, and
        # read back as the same string
        text = json.dumps(data, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    return text


def _reason(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return str(exc)[:200] or type(exc).__name__


def _message_data(message: ChatMessage, *, safe: bool, reason: str = "") -> dict[str, Any]:
    data: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        data["tool_calls"] = [
            {
                "name": c.name,
                "arguments": _safe_arguments(c.arguments, reason) if safe else dict(c.arguments),
                "id": c.id,
            }
            for c in message.tool_calls
        ]
    if message.tool_call_id is not None:
        data["tool_call_id"] = message.tool_call_id
    if message.name is not None:
        data["name"] = message.name
    if message.images:
        data["images"] = list(message.images)
    return data


def _safe_arguments(arguments: Any, reason: str) -> dict[str, Any]:
    """A bounded, JSON-safe stand-in for arguments that could not be encoded.

    Only the top level is looked at (no recursion: the arguments may be nested 10,000 deep):
    short scalars are kept, anything else is named by its type.
    """
    out: dict[str, Any] = {
        "_note": f"the original arguments could not be stored ({reason}); "
        "this is a summary of their top level"
    }
    items = list(arguments.items()) if isinstance(arguments, Mapping) else []
    for key, value in items[:SAFE_ARGUMENT_KEYS]:
        name = str(key)[:80]
        if isinstance(value, bool | int | str | None) or (
            isinstance(value, float) and math.isfinite(value)
        ):
            out[name] = value[:SAFE_VALUE_CHARS] if isinstance(value, str) else value
        else:
            out[name] = f"<{type(value).__name__} not stored>"
    if len(items) > SAFE_ARGUMENT_KEYS:
        out["_omitted_keys"] = len(items) - SAFE_ARGUMENT_KEYS
    return out


def message_from_json(text: str) -> ChatMessage:
    """The message stored as ``text``.

    Raises:
        MemoryStoreError: The stored row is not a message (a damaged database).
    """
    try:
        data = json.loads(text)
        calls = tuple(
            ToolCall(c["name"], c.get("arguments") or {}, c.get("id", ""))
            for c in data.get("tool_calls", ())
        )
        return ChatMessage(
            data["role"],
            data.get("content", ""),
            tool_calls=calls,
            tool_call_id=data.get("tool_call_id"),
            name=data.get("name"),
            images=tuple(data.get("images", ())),
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise MemoryStoreError(f"stored session message is damaged: {exc}: {text[:80]!r}") from exc


def title_for(messages: list[ChatMessage] | tuple[ChatMessage, ...]) -> str:
    """A session title: the first user message's first line, cut to 60 characters."""
    for message in messages:
        if message.role == "user" and message.content.strip():
            line = message.content.strip().splitlines()[0]
            # a lone surrogate cannot be stored as UTF-8 text: "?" in the title
            line = line.encode("utf-8", "replace").decode("utf-8")
            return line if len(line) <= TITLE_LENGTH else line[: TITLE_LENGTH - 1] + "…"
    return ""


class SessionMethods:
    """The api ``SessionStore`` half of SqliteMemory: history rows in the same database.

    Relies on the host class's ``_read(what)`` and ``_write(what)`` transaction contexts.
    """

    if TYPE_CHECKING:

        def _read(self, what: str) -> AbstractAsyncContextManager[Any]: ...

        def _write(self, what: str) -> AbstractAsyncContextManager[Any]: ...

        async def _write_once(self, what: str, body: Callable[[Any], None]) -> None: ...

        redactor: Redactor | None

    def _scrubbed(self, messages: Sequence[ChatMessage]) -> Sequence[ChatMessage]:
        """``messages`` with credentials hidden in their text and tool-call arguments.

        The fields are scrubbed, not the JSON: a kept prefix ending in a backslash would break
        the encoded row.
        """
        redactor = self.redactor
        if redactor is None:
            return messages
        return [
            dataclasses.replace(
                m,
                content=redactor.scrub(m.content),
                tool_calls=tuple(
                    dataclasses.replace(c, arguments=redactor.scrub_data(c.arguments))
                    for c in m.tool_calls
                ),
            )
            for m in messages
        ]

    async def load_history(self, session_id: str, *, limit: int | None = None) -> list[ChatMessage]:
        """The session's messages in order (empty for an unknown session).

        Args:
            session_id: The session.
            limit: Return only the newest ``limit`` messages (still oldest first). The engine
                passes its ``max_history``: the tail is read backwards through the
                ``(session_id, id)`` index, so the cost does not grow with the stored history.
                None returns everything.

        Raises:
            ValueError: ``limit`` is negative.
            MemoryStoreError: The database failed or a stored row is damaged.
        """
        if limit is None:
            sql = "SELECT message FROM session_messages WHERE session_id=? ORDER BY id"
            params: tuple[Any, ...] = (session_id,)
        elif limit < 0:
            raise ValueError(f"load_history limit must be >= 0 (or None for all), got {limit}")
        elif limit == 0:
            return []
        else:
            sql = (
                "SELECT message FROM (SELECT id, message FROM session_messages "
                "WHERE session_id=? ORDER BY id DESC LIMIT ?) ORDER BY id"
            )
            params = (session_id, limit)
        async with self._read("load history") as conn:
            rows = await conn.execute_fetchall(sql, params)
        return [message_from_json(r[0]) for r in rows]

    async def append_history(self, session_id: str, messages: Sequence[ChatMessage]) -> None:
        """Append messages to a session (created on first use) in one transaction."""
        if not messages:
            return
        messages = self._scrubbed(messages)
        now = time.time()
        rows = [(session_id, message_to_json(m), now) for m in messages]
        title = title_for(tuple(messages))

        def write(conn: Any) -> None:
            # On the worker thread: the three statements in one trip (see _write_once).
            conn.execute(
                "INSERT OR IGNORE INTO sessions (session_id, title, message_count, created_at, "
                "updated_at) VALUES (?, '', 0, ?, ?)",
                (session_id, now, now),
            )
            conn.executemany(
                "INSERT INTO session_messages (session_id, message, created_at) VALUES (?,?,?)",
                rows,
            )
            conn.execute(
                "UPDATE sessions SET message_count = message_count + ?, updated_at = ?, "
                "title = CASE WHEN title = '' THEN ? ELSE title END WHERE session_id = ?",
                (len(rows), now, title, session_id),
            )

        await self._write_once("append history", write)

    async def session_info(self, session_id: str) -> SessionInfo | None:
        """The stored session's title, message count and last update, or None."""
        async with self._read("session info") as conn:
            rows = await conn.execute_fetchall(
                "SELECT session_id, title, message_count, updated_at FROM sessions "
                "WHERE session_id=?",
                (session_id,),
            )
        return (
            SessionInfo(rows[0][0], rows[0][1], int(rows[0][2]), float(rows[0][3]))
            if rows
            else None
        )

    async def list_sessions(self, *, limit: int = 50) -> list[SessionInfo]:
        """Stored sessions, most recently updated first."""
        async with self._read("list sessions") as conn:
            rows = await conn.execute_fetchall(
                "SELECT session_id, title, message_count, updated_at FROM sessions "
                "ORDER BY updated_at DESC LIMIT ?",
                (limit,),
            )
        return [SessionInfo(r[0], r[1], int(r[2]), float(r[3])) for r in rows]

    async def delete_session(self, session_id: str) -> bool:
        """Delete a session and its messages; returns whether it existed."""
        async with self._write("delete session") as conn:
            await conn.execute("DELETE FROM session_messages WHERE session_id=?", (session_id,))
            cur = await conn.execute("DELETE FROM sessions WHERE session_id=?", (session_id,))
            return bool(cur.rowcount)


async def prune_session_messages(conn: Any, cutoff: float) -> int:
    """Delete session messages created before ``cutoff`` (epoch seconds) inside the caller's
    write transaction; fix the sessions' counts and drop sessions left empty.

    Returns how many messages were deleted.
    """
    cur = await conn.execute("DELETE FROM session_messages WHERE created_at < ?", (cutoff,))
    deleted = max(int(cur.rowcount), 0)
    if deleted:
        await conn.execute(
            "UPDATE sessions SET message_count = (SELECT COUNT(*) FROM session_messages m "
            "WHERE m.session_id = sessions.session_id)"
        )
        await conn.execute("DELETE FROM sessions WHERE message_count = 0")
    return deleted

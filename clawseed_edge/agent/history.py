"""Conversation history: bounded, group-preserving trimming, tool-output truncation, a token estimate.

The system prompt is not part of the history: it is built once and passed to
:meth:`History.for_request`, so it stays byte-identical across turns (providers cache the prefix).
The current time goes on each user message instead, as a :func:`time_prefix`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime

from clawseed_edge.api import ChatMessage

__all__ = [
    "History",
    "estimate_tokens",
    "time_prefix",
    "truncate_tool_output",
]

#: Tokens added per message for role markers and separators (chat templates add a few).
MESSAGE_OVERHEAD_TOKENS = 4
#: Tokens counted per attached image (providers charge a few hundred to ~1,600 for one).
IMAGE_TOKENS = 800
#: Characters per token of English text and code, on average.
CHARS_PER_TOKEN = 4


def truncate_tool_output(text: str, max_chars: int = 8000) -> str:
    """Shorten a tool's output to about ``max_chars`` characters, keeping its head and tail.

    Text of at most ``max_chars`` characters is returned unchanged. Longer text keeps its first
    two thirds of the budget (``max_chars * 2 // 3`` characters) and its last third, joined by a
    line ``[... N characters truncated ...]`` where N is exactly the number of characters left
    out. The marker line itself is not counted in the budget.

    Raises:
        ValueError: ``max_chars`` is less than 1.
    """
    if max_chars < 1:
        raise ValueError(f"max_chars must be at least 1, got {max_chars}")
    if len(text) <= max_chars:
        return text
    head = max_chars * 2 // 3
    tail = max_chars - head
    dropped = len(text) - head - tail
    return f"{text[:head]}\n[... {dropped} characters truncated ...]\n{text[len(text) - tail :]}"


def estimate_tokens(messages: Sequence[ChatMessage]) -> int:
    """A cheap estimate of the tokens ``messages`` take in a request.

    About one token per 4 characters of content, tool-call names and JSON arguments, tool names
    and call ids, plus :data:`MESSAGE_OVERHEAD_TOKENS` per message and :data:`IMAGE_TOKENS` per
    image. Good enough to decide when to trim; not a tokenizer.
    """
    chars = 0
    images = 0
    for msg in messages:
        chars += len(msg.content)
        chars += len(msg.name or "") + len(msg.tool_call_id or "")
        for call in msg.tool_calls:
            chars += len(call.name) + len(call.id)
            chars += len(json.dumps(call.arguments, ensure_ascii=False, default=str))
        images += len(msg.images)
    return (
        math.ceil(chars / CHARS_PER_TOKEN)
        + MESSAGE_OVERHEAD_TOKENS * len(messages)
        + IMAGE_TOKENS * images
    )


def time_prefix(now: datetime | None = None) -> str:
    """The ``"[YYYY-MM-DD HH:MM:SS TZ] "`` prefix put on each user message.

    Args:
        now: The time to show. An aware datetime is shown in its own zone; a naive one is taken
            as local time; ``None`` means now, in local time.

    The zone is its abbreviation (``UTC``, ``CET``); a zone without a name shows its offset
    (``+0530``).
    """
    if now is None:
        now = datetime.now().astimezone()
    elif now.tzinfo is None or now.utcoffset() is None:
        now = now.astimezone()
    zone = now.tzname() or now.strftime("%z")
    return f"[{now:%Y-%m-%d %H:%M:%S} {zone}] "


def _groups(messages: Sequence[ChatMessage]) -> Iterator[tuple[int, int]]:
    """Yield ``(start, end)`` slices that must be kept or dropped together.

    An assistant message with tool calls forms one group with the tool messages that follow it;
    every other message is a group of its own (including a tool message with no call before it).
    """
    i = 0
    n = len(messages)
    while i < n:
        j = i + 1
        if messages[i].role == "assistant" and messages[i].tool_calls:
            while j < n and messages[j].role == "tool":
                j += 1
        yield i, j
        i = j


class History:
    """The non-system messages of one conversation, trimmed to a bound on request.

    Args:
        max_messages: How many messages :meth:`trim` keeps at most (default 50).
        messages: Messages to start with (e.g. loaded from a session store).

    Raises:
        ValueError: ``max_messages`` is less than 1, or a system message is given.

    Not thread-safe; one History belongs to one session's turn loop.
    """

    __slots__ = ("_messages", "max_messages")

    def __init__(self, max_messages: int = 50, messages: Iterable[ChatMessage] = ()) -> None:
        if max_messages < 1:
            raise ValueError(f"max_messages must be at least 1, got {max_messages}")
        self.max_messages = max_messages
        self._messages: list[ChatMessage] = []
        self.extend(messages)

    @property
    def messages(self) -> tuple[ChatMessage, ...]:
        """The messages, oldest first."""
        return tuple(self._messages)

    def __len__(self) -> int:
        return len(self._messages)

    def __repr__(self) -> str:
        return f"History({len(self._messages)} messages, max_messages={self.max_messages})"

    def append(self, message: ChatMessage) -> None:
        """Add one message at the end.

        Raises:
            ValueError: ``message`` is a system message; pass the system prompt to
                :meth:`for_request` instead.
        """
        if message.role == "system":
            raise ValueError(
                "History holds no system messages: pass the system prompt to "
                "History.for_request(system_prompt) instead of appending it"
            )
        self._messages.append(message)

    def extend(self, messages: Iterable[ChatMessage]) -> None:
        """Add messages at the end, in order; all or none (a system message rejects the batch).

        Raises:
            ValueError: One of ``messages`` is a system message.
        """
        batch = list(messages)
        for msg in batch:
            if msg.role == "system":
                raise ValueError(
                    "History holds no system messages: pass the system prompt to "
                    "History.for_request(system_prompt) instead of adding it"
                )
        self._messages.extend(batch)

    def trim(self) -> int:
        """Drop the oldest messages until at most ``max_messages`` remain; return how many went.

        Messages go in whole groups: an assistant message with tool calls leaves together with
        the tool results that answer it, so the kept history never holds a tool result without
        its call, nor a call without its results. The kept history never starts with a tool
        message. The newest group is always kept, so if it alone is longer than
        ``max_messages`` (an answer with very many parallel calls) the history stays longer.
        """
        msgs = self._messages
        groups = list(_groups(msgs))
        start = 0
        g = 0
        # Leading tool messages without their call are never kept.
        while g < len(groups) - 1 and msgs[groups[g][0]].role == "tool":
            start = groups[g][1]
            g += 1
        while g < len(groups) - 1 and len(msgs) - start > self.max_messages:
            start = groups[g][1]
            g += 1
        if g == len(groups) - 1 and msgs[groups[g][0]].role == "tool":
            start = len(msgs)  # only an orphan tool message remains: nothing usable is left
        if start:
            del msgs[:start]
        return start

    def for_request(self, system_prompt: str) -> tuple[ChatMessage, ...]:
        """The messages to send: the system prompt first, then the history."""
        return (ChatMessage.system(system_prompt), *self._messages)

    def clear(self) -> None:
        """Forget every message."""
        self._messages.clear()

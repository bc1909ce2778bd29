"""A turn's answer as Telegram shows it (:class:`StreamedReply`), and the log filter that keeps
the Bot API's URL (it holds the token) out of httpx's request lines (:class:`HideBotUrls`)."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Any

from .text import MAX_MESSAGE_CHARS, split_message

if TYPE_CHECKING:
    from .outbox import Outbox

__all__ = ["HideBotUrls", "StreamedReply"]


class StreamedReply:
    """A turn's answer in its chat: one message edited as the answer streams (at most once
    per ``edit_interval_s``), then split into messages of at most 4,096 characters.

    Args:
        outbox: Where the messages and edits are sent.
        chat: The chat (its ``chat_id``; its ``last_edit`` is shared by the chat's replies).
        edit_interval_s: The shortest time between two edits of the chat's messages.
    """

    def __init__(self, outbox: Outbox, chat: Any, edit_interval_s: float) -> None:
        self.outbox = outbox
        self.chat = chat
        self.edit_interval_s = edit_interval_s
        self.tools: list[str] = []
        self.answer = ""
        self.message_id: int | None = None
        self.shown = ""

    def text(self) -> str:
        return "\n".join([*self.tools, *([self.answer.strip()] if self.answer.strip() else [])])

    async def update(self) -> None:
        """Show the answer so far, if an edit is due."""
        now = time.monotonic()
        if now - self.chat.last_edit < self.edit_interval_s:
            return
        text = self.text()
        if not text.strip():
            return
        if len(text) > MAX_MESSAGE_CHARS:
            text = text[: MAX_MESSAGE_CHARS - 1] + "…"
        await self._show(text)

    async def _show(self, text: str) -> None:
        if text == self.shown:
            return
        api = self.outbox.api
        self.chat.last_edit = time.monotonic()
        if self.message_id is None:
            sent = await self.outbox.call(api.send_message, self.chat.chat_id, text)
            if isinstance(sent, dict) and isinstance(sent.get("message_id"), int):
                self.message_id = sent["message_id"]
        else:
            await self.outbox.call(api.edit_message_text, self.chat.chat_id, self.message_id, text)
        self.shown = text

    async def finish(self) -> None:
        parts = split_message(self.text()) or ["(no answer)"]
        first, rest = parts[0], parts[1:]
        if self.message_id is not None and first != self.shown:
            wait = self.edit_interval_s - (time.monotonic() - self.chat.last_edit)
            if wait > 0:
                await asyncio.sleep(wait)
        await self._show(first)
        for part in rest:
            await self.outbox.call(self.outbox.api.send_message, self.chat.chat_id, part)


class HideBotUrls(logging.Filter):
    """Drops httpx's request lines for the Bot API (their URL holds the token)."""

    def __init__(self, prefix: str) -> None:
        super().__init__()
        self.prefix = prefix

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            return self.prefix not in record.getMessage()
        except Exception:
            return True

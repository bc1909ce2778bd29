"""The bot's outgoing calls (:class:`Outbox`): retried, bounded, and never raised to a caller.

Every message, edit, button answer and photo the channel sends goes through :meth:`Outbox.call`:
429 waits its ``retry_after`` (up to a bound), a lost network is retried a moment later, any other
refusal is logged and counted. A reply lost is not a crash. Sends made from synchronous code are
spawned as tasks, at most ``MAX_PENDING_SENDS`` at once, so a flood cannot grow memory.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from .client import BotApi
from .errors import TelegramApiError, TelegramRateLimited, TelegramUnreachable
from .text import split_message

__all__ = ["MAX_PENDING_SENDS", "MAX_RETRY_AFTER_S", "SEND_ATTEMPTS", "Outbox"]

log = logging.getLogger(__name__)

#: Sends waiting at once; more are dropped with a log line (a flood cannot grow memory).
MAX_PENDING_SENDS = 256
#: Attempts of one outgoing call (429 waits its retry_after, a lost network a moment).
SEND_ATTEMPTS = 4
#: The longest retry_after obeyed for one outgoing call (longer: the call is dropped).
MAX_RETRY_AFTER_S = 60.0


class Outbox:
    """Sends through one :class:`BotApi`, counting what failed in ``counters["send_errors"]``.

    Args:
        api: The Bot API client.
        counters: The channel's counters (``send_errors`` is added to).
    """

    def __init__(self, api: BotApi, counters: dict[str, int]) -> None:
        self.api = api
        self.counters = counters
        self._tasks: set[asyncio.Task[Any]] = set()

    async def call(self, method: Callable[..., Awaitable[Any]], *args: Any, **kw: Any) -> Any:
        """One outgoing call, retried a few times (429: after its ``retry_after``); None when
        it did not go through (logged, never raised: a reply lost is not a crash)."""
        result, _ = await self.attempt(method, *args, **kw)
        return result

    async def attempt(
        self, method: Callable[..., Awaitable[Any]], *args: Any, **kw: Any
    ) -> tuple[Any, str]:
        """Like :meth:`call`, with why it did not go through (``""`` when it did)."""
        for attempt in range(SEND_ATTEMPTS):
            try:
                return await method(*args, **kw), ""
            except TelegramRateLimited as exc:
                if exc.retry_after > MAX_RETRY_AFTER_S:
                    break
                await asyncio.sleep(exc.retry_after)
            except TelegramUnreachable:
                await asyncio.sleep(0.5 * (attempt + 1))
            except TelegramApiError as exc:
                if "not modified" not in exc.description:
                    log.warning("Telegram: %s", exc)
                    self.counters["send_errors"] += 1
                return None, f"Telegram said: {exc.description}"
        self.counters["send_errors"] += 1
        log.warning("Telegram: %s was dropped after %d attempts", _name(method), SEND_ATTEMPTS)
        return None, f"Telegram did not take it after {SEND_ATTEMPTS} attempts"

    def send(self, chat_id: int, text: str) -> None:
        """Send ``text`` in the background (split into messages as needed)."""
        self.spawn(self.send_now(chat_id, text))

    async def send_now(self, chat_id: int, text: str) -> list[int]:
        """Send ``text`` (split into messages as needed); the ids of the messages sent."""
        ids = []
        for part in split_message(text) or ["(empty answer)"]:
            sent = await self.call(self.api.send_message, chat_id, part)
            if isinstance(sent, dict) and isinstance(sent.get("message_id"), int):
                ids.append(sent["message_id"])
        return ids

    def spawn(self, coro: Awaitable[Any]) -> None:
        """Run ``coro`` in the background; dropped (and closed) past ``MAX_PENDING_SENDS``."""
        if len(self._tasks) >= MAX_PENDING_SENDS:
            log.warning("Telegram: too many sends waiting; one was dropped")
            close = getattr(coro, "close", None)
            if callable(close):
                close()
            return
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def cancel(self) -> None:
        """Cancel every send still waiting and wait for them to end. Idempotent."""
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)


def _name(method: Callable[..., Any]) -> str:
    return getattr(method, "__name__", "a call")

"""TelegramChannel: a Telegram bot as a :class:`~clawseed_edge.api.Channel` of the service.

It long-polls the Bot API (nothing listens on the device), serves the numeric user ids of
``allowed_users`` only (a stranger is told their id once, and nothing of theirs reaches the
model or a tool), runs one conversation per chat through the shared
:class:`~clawseed_edge.channels.Conversations`, shows approvals as inline buttons through the
shared broker, and stops everything through the one emergency stop (``/stop``).

The poller does not die: 409 (another poller) and 5xx back off and retry, 429 waits its
``retry_after``, a lost network is retried, a poll that does not finish within its timeout plus
a margin is abandoned and started again (the watchdog); only 401 (a wrong or revoked token)
stops the channel, with the reason in the log and in ``status``.

The channel holds the polling, the updates and each chat's turn; what it sends goes through
:class:`~.outbox.Outbox`, approvals through :class:`~.approvals.ApprovalButtons`, photos through
:mod:`.photos`; the commands' texts are in :mod:`.commands`, the ``/pair`` code in :mod:`.pairing`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clawseed_edge.api import (
    AbortedEvent,
    ChunkEvent,
    DoneEvent,
    ErrorEvent,
    ToolCallEvent,
    ToolContext,
    ToolResultEvent,
)
from clawseed_edge.api.wording import for_people

from .approvals import ApprovalButtons
from .client import BotApi
from .commands import COMMANDS, command_name, help_text, status_text
from .errors import (
    TelegramApiError,
    TelegramConflict,
    TelegramError,
    TelegramRateLimited,
    TelegramUnauthorized,
    TelegramUnreachable,
)
from .outbox import Outbox
from .pairing import PairCode
from .photos import TurnPhotos, send_photo
from .reply import HideBotUrls, StreamedReply
from .text import MAX_MESSAGE_CHARS, approval_text, forwarded, quoted_forward, tool_line

if TYPE_CHECKING:
    from clawseed_edge.channels.approvals import ApprovalBroker
    from clawseed_edge.channels.conversations import Conversation, Conversations
    from clawseed_edge.config.schema import TelegramSettings
    from clawseed_edge.state import PairingTokens, ShownApprovals

__all__ = ["COMMANDS", "TelegramChannel"]

log = logging.getLogger(__name__)
#: Strangers remembered (so each gets one reply); the oldest are forgotten past this.
MAX_STRANGERS = 1000
#: Seconds between two "typing…" actions while a turn runs (Telegram shows one for ~5 s).
TYPING_EVERY_S = 4.0

Estop = Callable[[str], Awaitable[list[str]]]


@dataclass(eq=False, slots=True)
class _Chat:
    """One private chat with an allowed user: its conversation and its running turn."""

    chat_id: int
    user_id: int
    conversation: Conversation
    turn: asyncio.Task[None] | None = None
    last_edit: float = -1e9
    resets: int = 0


class TelegramChannel:
    """The Telegram bot, started and stopped as one channel.

    Args:
        settings: ``[channels.telegram]``.
        token: The bot token (never logged; registered with the log scrubber at start).
        conversations: Where each chat's conversation and agent come from.
        broker: The approvals broker (None: the channel shows no approvals).
        estop: The service's one emergency stop (``/stop``).
        status: A line about the service for ``/status``.
        api: A ready client (tests); default one on ``settings.api_base``.
        backoff_s: First and longest wait between failed polls.
        watchdog_margin_s: A poll not finished within its timeout plus this is restarted.
        pairings: The host's one pairing store (state.db), where users paired with ``/pair``
            are kept (``pair --list`` shows them); None: kept in memory only.
        shown: Where the approval messages it sends are remembered, so that those left by a
            previous process are edited to "expired" at start; None: not remembered.
        peripherals: Whose state feeds ``/status`` shows (the host's hardware view).
    """

    name = "telegram"

    def __init__(
        self,
        settings: TelegramSettings,
        token: str,
        *,
        conversations: Conversations,
        broker: ApprovalBroker | None = None,
        estop: Estop | None = None,
        status: Callable[[], str] | None = None,
        api: BotApi | None = None,
        backoff_s: tuple[float, float] = (1.0, 60.0),
        watchdog_margin_s: float = 10.0,
        pairings: PairingTokens | None = None,
        shown: ShownApprovals | None = None,
        peripherals: Sequence[Any] = (),
    ) -> None:
        self.settings = settings
        self._token = token
        self.conversations = conversations
        self.broker = broker
        self.estop = estop
        self.status_line = status
        self.api = api if api is not None else BotApi(token, settings.api_base)
        self.pairings = pairings
        self.shown = shown
        self.peripherals = tuple(peripherals)
        self.paired: frozenset[int] = frozenset()
        self.allowed = frozenset(settings.allowed_users) | self.paired
        self._pair_code = PairCode()
        self.backoff_s = backoff_s
        self.watchdog_margin_s = watchdog_margin_s
        #: ``stopped``, ``starting``, ``polling``, ``retrying``, ``failed``.
        self.state = "stopped"
        #: Why the channel is retrying or failed (no token in it).
        self.detail = ""
        #: Counters for ``status`` and tests.
        self.counters: dict[str, int] = {
            "updates": 0,
            "poll_errors": 0,
            "watchdog_restarts": 0,
            "strangers_refused": 0,
            "send_errors": 0,
        }
        self.username = ""
        self._offset: int | None = None
        self._chats: dict[int, _Chat] = {}
        self._strangers: dict[int, None] = {}
        self._poller: asyncio.Task[None] | None = None
        self._stopping = False
        self.outbox = Outbox(self.api, self.counters)
        self._approvals = ApprovalButtons(
            self.outbox, broker, shown, lambda user_id: user_id in self.allowed
        )

    # --- the Channel protocol ------------------------------------------------------------

    @property
    def answerers(self) -> int:
        """The allowed users, while the bot is polling (they can press Approve / Deny)."""
        return len(self.allowed) if self.state == "polling" and self.broker is not None else 0

    async def start(self) -> None:
        """Start polling in the background (a Telegram that cannot be reached now is retried;
        it never keeps the service from starting)."""
        from clawseed_edge.agent.redact import Scrubber, install_log_redaction

        install_log_redaction(Scrubber([self._token]))
        # httpx logs each request's URL at INFO, and a Bot API URL holds the token: those
        # lines are dropped (other requests' lines, a provider's, stay).
        httpx_log = logging.getLogger("httpx")
        if not any(isinstance(f, HideBotUrls) for f in httpx_log.filters):
            httpx_log.addFilter(HideBotUrls(f"{self.api.api_base}/bot"))
        if self.pairings is not None:
            ids = await self.pairings.peers(self.name)
            self.paired = frozenset(int(x) for x in ids if x.isdigit())
            self.allowed = self.allowed | self.paired
        self._stopping = False
        self.state = "starting"
        self._poller = asyncio.create_task(self._run(), name="telegram-poller")

    async def stop(self, reason: str) -> None:
        """Stop polling, abort running turns (2 s to finish), close the client. Idempotent."""
        self._stopping = True
        if self._poller is not None:
            self._poller.cancel()
            await asyncio.gather(self._poller, return_exceptions=True)
            self._poller = None
        turns = [c.turn for c in self._chats.values() if c.turn is not None and not c.turn.done()]
        if turns:
            _, pending = await asyncio.wait(turns, timeout=2.0)
            for chat in self._chats.values():
                chat.conversation.abort(reason)
            if pending:
                _, stuck = await asyncio.wait(pending, timeout=2.0)
                for task in stuck:
                    task.cancel()
        for chat in list(self._chats.values()):
            self.conversations.close(chat.conversation)
        self._chats.clear()
        await self.outbox.cancel()
        await self.api.aclose()
        if self.state != "failed":
            self.state = "stopped"

    def deliver(self, frame: Mapping[str, Any]) -> None:
        """Resolved approvals edit their messages; estops, job answers and alerts go to every
        allowed user."""
        kind = str(frame.get("type", ""))
        if kind == "approval_resolved":
            self._spawn(self._approvals.show_resolution(frame))
        elif kind == "estop":
            failures = frame.get("failures") or []
            text = f"Emergency stop ({frame.get('by', '')}): " + (
                "every output is in its safe state; it holds until a paired user sends /reset."
                if not failures
                else "NOT every output is safe: " + "; ".join(map(str, failures))[:500]
            )
            self._broadcast(text)
        elif kind == "estop_reset":
            self._broadcast(
                f"Emergency stop reset by {str(frame.get('by', ''))[:80]}: every output stays "
                "at its safe level; switch what you need on again. /reset now starts a new "
                "conversation."
            )
        elif kind == "job_result":
            name = frame.get("job") or frame.get("name") or "job"
            body = frame.get("output") or frame.get("text") or frame.get("error") or ""
            self._broadcast(f"Scheduled job {name}: {body}"[:MAX_MESSAGE_CHARS])
        elif kind == "notification" and frame.get("photo"):
            text = str(frame.get("text") or "")
            for user in sorted(self.allowed):
                self._spawn(send_photo(self.outbox, user, Path(str(frame["photo"])), text))
        elif kind in ("alert", "notification"):
            self._broadcast(str(frame.get("text") or frame.get("message") or kind))

    def ask(self, frame: Mapping[str, Any]) -> None:
        """An approval request with Approve / Deny buttons, to every allowed user."""
        if self.state != "polling" or not self.allowed:
            return
        request_id = str(frame.get("id", ""))[:32]
        self._approvals.show(request_id, approval_text(frame), sorted(self.allowed))

    def abort_turns(self, reason: str) -> int:
        return self.conversations.abort_all(reason, channel=self.name)

    def describe(self) -> dict[str, Any]:
        """``name``, ``state`` and the details ``status`` and ``channels list`` show."""
        return {
            "name": self.name,
            "state": self.state,
            "detail": self.detail,
            "bot": f"@{self.username}" if self.username else "",
            "allowed_users": len(self.allowed),
            "paired_users": len(self.paired),
            "chats": len(self._chats),
            **self.counters,
        }

    # --- polling -------------------------------------------------------------------------

    async def _run(self) -> None:
        delay = self.backoff_s[0]
        ready = False
        while not self._stopping:
            try:
                if not ready:
                    me = await self.api.get_me()
                    self.username = str(me.get("username", ""))
                    await self.api.set_my_commands(COMMANDS)
                    ready = True
                    await self._approvals.expire_old()
                    # Polling from now on (approvals may be asked during the first long poll).
                    self.state, self.detail = "polling", ""
                    log.info("Telegram bot @%s is polling", self.username)
                await self._poll_once()
                delay = self.backoff_s[0]
                if self.state != "polling":
                    self.state, self.detail = "polling", ""
            except TelegramUnauthorized as exc:
                self.state = "failed"
                self.detail = (
                    f"{exc.description}: the bot token was refused; get a new one from "
                    "@BotFather, `clawseed-edge secrets set "
                    f"{self.settings.bot_token_env}`, and restart the service"
                )
                log.error("Telegram channel stopped: %s", self.detail)
                return
            except TelegramRateLimited as exc:
                self._retrying(f"rate limited; waiting {exc.retry_after:g} s")
                await asyncio.sleep(min(exc.retry_after, 3600.0))
            except (TelegramConflict, TelegramApiError, TelegramUnreachable) as exc:
                self.counters["poll_errors"] += 1
                hint = (
                    " (another process polls with this token: stop it, or delete the webhook)"
                    if isinstance(exc, TelegramConflict)
                    else ""
                )
                self._retrying(f"{exc}{hint}; retrying in {delay:.1f} s")
                await asyncio.sleep(delay * random.uniform(0.8, 1.2))
                delay = min(delay * 2, self.backoff_s[1])
            except TimeoutError:
                self.counters["watchdog_restarts"] += 1
                self._retrying("a poll did not finish in time; started again")
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a bug in handling must not end the poller
                log.exception("Telegram poller: unexpected error")
                self._retrying(f"unexpected {type(exc).__name__}; retrying in {delay:.1f} s")
                await asyncio.sleep(delay)
                delay = min(delay * 2, self.backoff_s[1])

    def _retrying(self, why: str) -> None:
        if self.state != "retrying" or self.detail != why:
            log.warning("Telegram: %s", why)
        self.state, self.detail = "retrying", why

    async def _poll_once(self) -> None:
        timeout = self.settings.poll_timeout_s
        # The watchdog: a poll that hangs past its own timeout is abandoned (TimeoutError).
        async with asyncio.timeout(timeout + self.watchdog_margin_s):
            updates = await self.api.get_updates(self._offset, timeout_s=timeout)
        if self.state != "polling":
            self.state, self.detail = "polling", ""
        for update in updates:
            update_id = update.get("update_id")
            if isinstance(update_id, int):
                # Confirmed with the next poll: an update is handled once even if it fails.
                self._offset = max(self._offset or 0, update_id + 1)
            self.counters["updates"] += 1
            try:
                self._handle(update)
            except Exception:
                log.exception("Telegram: an update could not be handled")

    # --- updates -------------------------------------------------------------------------

    def _handle(self, update: Mapping[str, Any]) -> None:
        message = update.get("message")
        if isinstance(message, dict):
            self._on_message(message)
            return
        callback = update.get("callback_query")
        if isinstance(callback, dict):
            self._approvals.on_callback(callback)

    def _on_message(self, message: Mapping[str, Any]) -> None:
        sender = message.get("from") or {}
        chat = message.get("chat") or {}
        user_id = sender.get("id")
        chat_id = chat.get("id")
        if not isinstance(user_id, int) or not isinstance(chat_id, int):
            return
        text = message.get("text")
        if isinstance(text, str) and forwarded(message):
            # Someone else's words, passed on by the owner: quoted content, never instructions.
            text = quoted_forward(message, text)
        if chat.get("type") != "private":
            text = self._addressed(message, text)
            if text is None or user_id not in self.allowed:
                return  # not for the bot, or not from an allowed user: silently ignored

        if user_id not in self.allowed:
            if isinstance(text, str) and text.startswith("/pair"):
                self._pair(chat_id, user_id, text)
                return
            self._refuse_stranger(chat_id, user_id)
            return
        if not isinstance(text, str) or not text.strip():
            self._send(chat_id, "Only text messages are understood.")
            return
        if len(text) > self.settings.max_message_chars:
            self._send(
                chat_id,
                f"That message is too long ({len(text)} characters; at most "
                f"{self.settings.max_message_chars}).",
            )
            return
        state = self._chat(chat_id, user_id)
        if text.startswith("/"):
            self._command(state, text)
            return
        if state.turn is not None and not state.turn.done():
            self._send(chat_id, "Still working on your last message; wait for it or send /stop.")
            return
        state.turn = asyncio.create_task(self._turn(state, text), name=f"telegram-turn-{chat_id}")

    def _addressed(self, message: Mapping[str, Any], text: Any) -> str | None:
        """In a group (when ``groups`` is on): the text without the bot's mention, if it
        mentions the bot or replies to it; else None."""
        chat_type = (message.get("chat") or {}).get("type")
        if not self.settings.groups or chat_type not in ("group", "supergroup"):
            log.debug("Telegram: a message in a %s chat was ignored", chat_type)
            return None
        if not isinstance(text, str) or not self.username:
            return None
        mention = f"@{self.username}"
        replied = (message.get("reply_to_message") or {}).get("from") or {}
        if mention.lower() in text.lower():
            start = text.lower().index(mention.lower())
            stripped = (text[:start] + text[start + len(mention) :]).strip()
            return stripped if not text.startswith("/") else text
        if replied.get("username") == self.username:
            return text
        return None

    def _refuse_stranger(self, chat_id: int, user_id: int) -> None:
        self.counters["strangers_refused"] += 1
        if user_id in self._strangers:
            return
        if len(self._strangers) >= MAX_STRANGERS:
            self._strangers.pop(next(iter(self._strangers)))
        self._strangers[user_id] = None
        log.warning("Telegram: refused a message from user id %d (not in allowed_users)", user_id)
        self._send(
            chat_id,
            f"This bot serves its owner only. Your Telegram user id is {user_id}. To allow you, "
            "the owner adds it to allowed_users in [channels.telegram] of the config file and "
            "restarts clawseed-edge, or runs `clawseed-edge pair --telegram` and you send "
            "/pair <code>.",
        )

    # --- pairing -------------------------------------------------------------------------

    def new_pair_code(self) -> str:
        """A fresh one-time code for ``/pair <code>`` (the previous one stops working)."""
        return self._pair_code.new()

    def _pair(self, chat_id: int, user_id: int, text: str) -> None:
        given = text.split(maxsplit=1)[1].strip() if len(text.split(maxsplit=1)) == 2 else ""
        if not self._pair_code.take(given):
            log.warning("Telegram: a wrong or expired pairing code from user id %d", user_id)
            self._send(
                chat_id,
                "That code does not work (wrong, used or expired). The owner prints a new one "
                "with `clawseed-edge pair --telegram`.",
            )
            return
        self.paired = self.paired | {user_id}
        self.allowed = self.allowed | {user_id}
        self._strangers.pop(user_id, None)
        if self.pairings is not None:
            self._spawn(self.pairings.add_peer(self.name, str(user_id), f"Telegram user {user_id}"))
        log.warning("Telegram: user id %d paired with a one-time code", user_id)
        self._send(chat_id, f"Paired: user id {user_id} is allowed now. /help lists what I do.")

    def peer_revoked(self, entry_id: str) -> bool:
        """Forget a user paired with ``/pair`` whose entry ``pair --revoke`` removed (their
        chat's running turn is aborted); returns whether it was one of ours."""
        prefix = f"{self.name}-"
        if not entry_id.startswith(prefix) or not entry_id[len(prefix) :].isdigit():
            return False
        user_id = int(entry_id[len(prefix) :])
        if user_id not in self.paired:
            return False
        self.paired = self.paired - {user_id}
        self.allowed = frozenset(self.settings.allowed_users) | self.paired
        for chat in self._chats.values():
            if chat.user_id == user_id and user_id not in self.allowed:
                chat.conversation.abort("the user's pairing was revoked")
        log.warning("Telegram: user id %d is no longer paired (revoked)", user_id)
        return True

    def _chat(self, chat_id: int, user_id: int) -> _Chat:
        state = self._chats.get(chat_id)
        if state is None:
            conversation = self.conversations.open(self.name, str(user_id), f"telegram-{chat_id}")
            state = _Chat(chat_id, user_id, conversation)
            self._chats[chat_id] = state
        return state

    # --- commands ------------------------------------------------------------------------

    def _command(self, chat: _Chat, text: str) -> None:
        command = command_name(text)
        if command in ("start", "help"):
            self._send(chat.chat_id, help_text(chat.user_id))
        elif command == "status":
            self._send(chat.chat_id, status_text(self.status_line, self.peripherals))
        elif command == "stop":
            self._spawn(self._stop_command(chat))
        elif command == "reset" and getattr(self.estop, "latched", False):
            self._spawn(self._reset_estop(chat))  # a paired person: the latch is theirs to reset
        elif command == "reset":
            chat.conversation.abort("a new conversation was started (/reset)")
            self.conversations.close(chat.conversation)
            chat.resets += 1
            chat.conversation = self.conversations.open(
                self.name,
                str(chat.user_id),
                f"telegram-{chat.chat_id}-{int(time.time())}-{chat.resets}",
            )
            self._send(chat.chat_id, "A new conversation starts now.")
        else:
            self._send(chat.chat_id, f"Unknown command /{command[:32]}; /help lists them.")

    async def _stop_command(self, chat: _Chat) -> None:
        if self.estop is None:
            self.abort_turns("stopped from Telegram (/stop)")
            await self._send_now(chat.chat_id, "Stopped the running turns (no outputs here).")
            return
        failures = await self.estop(f"/stop from Telegram user {chat.user_id}")
        # Every allowed user hears of it through the estop notification (deliver).
        if failures:
            log.warning("Telegram /stop: not every output is safe: %s", failures)

    async def _reset_estop(self, chat: _Chat) -> None:
        reset = getattr(self.estop, "reset", None)
        if reset is not None and await reset(f"Telegram user {chat.user_id}"):
            return  # every allowed user hears of it through the estop_reset notification
        await self._send_now(chat.chat_id, "The emergency stop was not latched; nothing reset.")

    # --- turns ---------------------------------------------------------------------------

    async def _turn(self, chat: _Chat, text: str) -> None:
        typing = asyncio.create_task(self._typing(chat.chat_id))
        reply = StreamedReply(self.outbox, chat, self.settings.edit_interval_s)
        photos = TurnPhotos()
        try:
            context = ToolContext(session_id=chat.conversation.session_id, channel=self.name)
            agent = chat.conversation.agent
            async with contextlib.aclosing(
                agent.turn(text, session_id=chat.conversation.session_id, context=context)
            ) as events:
                async for event in events:
                    if isinstance(event, ChunkEvent):
                        reply.answer += event.text
                        await reply.update()
                    elif isinstance(event, ToolCallEvent):
                        reply.tools.append(tool_line(event.call.name, event.call.arguments))
                        await reply.update()
                    elif isinstance(event, ToolResultEvent):
                        photos.add(event.result)  # a snapshot: sent after the answer
                        if not event.result.success:
                            reply.tools.append(f"  ✗ {for_people(str(event.result.error))[:100]}")
                    elif isinstance(event, DoneEvent):
                        reply.answer = event.text
                    elif isinstance(event, AbortedEvent):
                        reply.answer += f"\n(stopped: {event.reason})"
                    elif isinstance(event, ErrorEvent):
                        reply.answer += f"\n(error: {event.message})"
        except Exception as exc:
            log.exception("Telegram turn of chat %d failed", chat.chat_id)
            reply.answer += f"\n(the turn failed: {type(exc).__name__})"
        finally:
            typing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await typing
        await reply.finish()
        # The answer first (it says what the pictures show), then the pictures themselves.
        await photos.send(self.outbox, chat.chat_id, self.peripherals)

    async def _typing(self, chat_id: int) -> None:
        while True:
            with contextlib.suppress(TelegramError):
                await self.api.send_chat_action(chat_id, "typing")
            await asyncio.sleep(TYPING_EVERY_S)

    # --- sending -------------------------------------------------------------------------

    def _broadcast(self, text: str) -> None:
        for user in sorted(self.allowed):
            self._send(user, text)

    def _send(self, chat_id: int, text: str) -> None:
        self.outbox.send(chat_id, text)

    async def _send_now(self, chat_id: int, text: str) -> list[int]:
        return await self.outbox.send_now(chat_id, text)

    def _spawn(self, coro: Awaitable[Any]) -> None:
        self.outbox.spawn(coro)

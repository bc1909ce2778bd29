"""FakeBotApi: a fake Telegram Bot API on 127.0.0.1 for the Telegram channel's tests and yours.

It speaks the real wire protocol (``POST /bot<token>/<method>``, JSON or form bodies,
``{"ok": true, "result": ...}`` or ``{"ok": false, "error_code": ..., "description": ...}``),
keeps scripted updates for ``getUpdates`` (a long poll that waits for the next one), remembers
every message it was asked to send or edit, and records every call::

    async with FakeBotApi(token="123:abc") as bot:
        bot.push_message(user_id=42, text="switch the porch light on")
        ...  # point [channels.telegram] api_base at bot.url
        message = await bot.wait_for_message(chat_id=42, contains="on")

Failures are injected per method: :meth:`fail` (a Bot API error such as 409, 429 with
``retry_after``, 500), :meth:`hang` (accept the call, never answer), :meth:`drop` (close the
connection: the network went away).
"""

from __future__ import annotations

import asyncio
import email.policy
import itertools
import json
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from email.parser import BytesParser
from typing import Any
from urllib.parse import parse_qsl

from .base import FakeModelServer, RecordedRequest, _Http

__all__ = ["BotCall", "FakeBotApi", "SentMessage", "SentPhoto"]


@dataclass(slots=True)
class BotCall:
    """One Bot API call the fake received: its method and its decoded parameters."""

    method: str
    params: dict[str, Any]
    answered: str = "ok"


@dataclass(slots=True)
class SentMessage:
    """A message the bot sent, as it stands now (``edits`` counts editMessageText calls)."""

    chat_id: int
    message_id: int
    text: str
    reply_markup: dict[str, Any] | None = None
    edits: int = 0
    history: list[str] = field(default_factory=list)


@dataclass(slots=True)
class SentPhoto:
    """A photo the bot sent (``sendPhoto`` with an uploaded file)."""

    chat_id: int
    message_id: int
    photo: bytes
    caption: str = ""


@dataclass(slots=True)
class _Fault:
    kind: str  # "error", "hang", "drop"
    status: int = 500
    description: str = ""
    retry_after: float | None = None


class FakeBotApi(FakeModelServer):
    """A Telegram Bot API for one bot token.

    Args:
        token: The bot token the fake accepts; any other answers 401 Unauthorized.
        username: The bot's ``getMe`` username.
        max_poll_s: Bound of one long poll, whatever ``timeout`` the client asks for.
        first_update_id: The first update's id (a fake that stands in for one that went away
            continues its numbering, as Telegram does).
    """

    def __init__(
        self,
        *,
        token: str = "123456:TEST-fake-bot-token-0000",
        username: str = "clawseed_test_bot",
        max_poll_s: float = 30.0,
        port: int = 0,
        first_update_id: int = 1,
    ) -> None:
        super().__init__(port=port)
        self.token = token
        self.username = username
        self.max_poll_s = max_poll_s
        #: Every call, in order (including failed ones).
        self.calls: list[BotCall] = []
        #: Every message sent, by message id.
        self.messages: dict[int, SentMessage] = {}
        #: Every photo sent, in order.
        self.photos: list[SentPhoto] = []
        #: What ``setMyCommands`` set last.
        self.commands: list[dict[str, Any]] = []
        #: The offset of the last ``getUpdates`` (what the client confirmed).
        self.confirmed_offset: int | None = None
        self._updates: list[dict[str, Any]] = []
        self._update_ids = itertools.count(first_update_id)
        #: The id the next pushed update gets.
        self.next_update_id = first_update_id
        self._message_ids = itertools.count(1000)
        self._faults: dict[str, deque[_Fault]] = {}
        self._new_update: asyncio.Event | None = None

    # --- scripting -----------------------------------------------------------------------

    def push_update(self, update: dict[str, Any]) -> int:
        """Queue a raw update (``update_id`` is added); returns its id."""
        update_id = next(self._update_ids)
        self.next_update_id = update_id + 1
        self._updates.append({"update_id": update_id, **update})
        self._wake()
        return update_id

    def push_message(
        self,
        user_id: int,
        text: str,
        *,
        chat_id: int | None = None,
        chat_type: str = "private",
        first_name: str = "Tester",
    ) -> int:
        """A user writes ``text`` (in a private chat with the bot unless ``chat_id`` says
        otherwise); returns the update id."""
        chat = chat_id if chat_id is not None else user_id
        return self.push_update(
            {
                "message": {
                    "message_id": next(self._message_ids),
                    "date": int(time.time()),
                    "chat": {"id": chat, "type": chat_type},
                    "from": {"id": user_id, "is_bot": False, "first_name": first_name},
                    "text": text,
                }
            }
        )

    def push_callback(self, user_id: int, message_id: int, data: str) -> int:
        """A user presses an inline button with ``data`` under message ``message_id``."""
        message = self.messages.get(message_id)
        chat_id = message.chat_id if message is not None else user_id
        return self.push_update(
            {
                "callback_query": {
                    "id": f"cb{next(self._message_ids)}",
                    "from": {"id": user_id, "is_bot": False, "first_name": "Tester"},
                    "message": {
                        "message_id": message_id,
                        "chat": {"id": chat_id, "type": "private"},
                        "text": message.text if message is not None else "",
                    },
                    "data": data,
                }
            }
        )

    def fail(
        self,
        method: str,
        status: int,
        description: str = "",
        *,
        retry_after: float | None = None,
        times: int = 1,
    ) -> None:
        """Answer the next ``times`` calls of ``method`` with a Bot API error."""
        text = description or {
            401: "Unauthorized",
            409: "Conflict: terminated by other getUpdates request; make sure that only one "
            "bot instance is running",
            429: "Too Many Requests: retry after {}",
            500: "Internal Server Error",
            502: "Bad Gateway",
        }.get(status, f"fake error {status}")
        text = text.format(int(retry_after or 1))
        for _ in range(times):
            self._fault_queue(method).append(_Fault("error", status, text, retry_after))

    def hang(self, method: str, times: int = 1) -> None:
        """Accept the next ``times`` calls of ``method`` and never answer them."""
        for _ in range(times):
            self._fault_queue(method).append(_Fault("hang"))

    def drop(self, method: str, times: int = 1) -> None:
        """Close the connection of the next ``times`` calls of ``method`` (network loss)."""
        for _ in range(times):
            self._fault_queue(method).append(_Fault("drop"))

    # --- reading what happened -----------------------------------------------------------

    def calls_of(self, method: str) -> list[BotCall]:
        return [c for c in self.calls if c.method == method]

    def sent_to(self, chat_id: int) -> list[SentMessage]:
        """The messages sent to ``chat_id``, oldest first."""
        return [m for m in self.messages.values() if m.chat_id == chat_id]

    def texts_to(self, chat_id: int) -> list[str]:
        return [m.text for m in self.sent_to(chat_id)]

    async def wait_until(
        self, predicate: Callable[[], Any], *, timeout_s: float = 10.0, what: str = "it"
    ) -> Any:
        """Poll ``predicate`` until it returns something truthy (returned); a TimeoutError
        names ``what`` and the calls seen."""
        deadline = asyncio.get_running_loop().time() + timeout_s
        while True:
            value = predicate()
            if value:
                return value
            if asyncio.get_running_loop().time() > deadline:
                seen = [f"{c.method}:{c.answered}" for c in self.calls[-20:]]
                raise TimeoutError(f"fake Bot API: no {what} within {timeout_s:g} s; calls {seen}")
            await asyncio.sleep(0.01)

    async def wait_for_message(
        self, chat_id: int, contains: str = "", *, timeout_s: float = 10.0
    ) -> SentMessage:
        """The first message to ``chat_id`` whose current text holds ``contains``."""

        def find() -> SentMessage | None:
            return next((m for m in self.sent_to(chat_id) if contains in m.text), None)

        found: SentMessage = await self.wait_until(
            find, timeout_s=timeout_s, what=f"message to {chat_id} with {contains!r}"
        )
        return found

    # --- serving -------------------------------------------------------------------------

    async def start(self) -> None:
        self._new_update = asyncio.Event()
        await super().start()

    def _wake(self) -> None:
        event = self._new_update
        if event is None:
            return
        loop = self._loop
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if loop is not None and running is not loop:
            loop.call_soon_threadsafe(event.set)
        else:
            event.set()

    def _fault_queue(self, method: str) -> deque[_Fault]:
        return self._faults.setdefault(method, deque())

    async def _dispatch(self, request: RecordedRequest, http: _Http) -> None:
        prefix = "/bot"
        token, _, method = request.path[len(prefix) :].partition("/")
        if not request.path.startswith(prefix) or not method:
            await http.send_json(404, {"ok": False, "error_code": 404, "description": "Not Found"})
            return
        params = _params(request)
        call = BotCall(method, params)
        self.calls.append(call)
        if token != self.token:
            call.answered = "401"
            await self._error(http, 401, "Unauthorized")
            return
        queue = self._faults.get(method)
        if queue:
            fault = queue.popleft()
            call.answered = fault.kind if fault.kind != "error" else str(fault.status)
            if fault.kind == "hang":
                assert self._closing is not None
                await self._closing.wait()
                return
            if fault.kind == "drop":
                return  # the connection closes without an answer
            extra = {"retry_after": fault.retry_after} if fault.retry_after is not None else None
            await self._error(http, fault.status, fault.description, extra)
            return
        handler = getattr(self, f"_m_{method}", None)
        if handler is None:
            call.answered = "404"
            await self._error(http, 404, "Not Found: method not found")
            return
        try:
            result = await handler(params)
        except _BadRequest as exc:
            call.answered = "400"
            await self._error(http, 400, f"Bad Request: {exc}")
            return
        await http.send_json(200, {"ok": True, "result": result})

    @staticmethod
    async def _error(
        http: _Http, status: int, description: str, parameters: dict[str, Any] | None = None
    ) -> None:
        body: dict[str, Any] = {"ok": False, "error_code": status, "description": description}
        if parameters:
            body["parameters"] = parameters
        await http.send_json(status, body)

    # --- methods -------------------------------------------------------------------------

    async def _m_getMe(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"id": 1, "is_bot": True, "first_name": "Test bot", "username": self.username}

    async def _m_getUpdates(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        offset = params.get("offset")
        if offset is not None:
            offset = int(offset)
            self.confirmed_offset = offset
            # Confirmed: an update below the offset is never sent again.
            self._updates = [u for u in self._updates if u["update_id"] >= offset]
        limit = int(params.get("limit", 100))
        timeout = min(float(params.get("timeout", 0)), self.max_poll_s)
        assert self._new_update is not None and self._closing is not None
        if not self._updates and timeout > 0:
            self._new_update.clear()
            waiter = asyncio.ensure_future(self._new_update.wait())
            closing = asyncio.ensure_future(self._closing.wait())
            await asyncio.wait({waiter, closing}, timeout=timeout, return_when="FIRST_COMPLETED")
            waiter.cancel()
            closing.cancel()
        return self._updates[:limit]

    async def _m_sendMessage(self, params: dict[str, Any]) -> dict[str, Any]:
        chat_id = int(_need(params, "chat_id"))
        text = str(_need(params, "text"))
        if not text:
            raise _BadRequest("message text is empty")
        if len(text) > 4096:
            raise _BadRequest("message is too long")
        message_id = next(self._message_ids)
        markup = _markup(params.get("reply_markup"))
        self.messages[message_id] = SentMessage(chat_id, message_id, text, markup, 0, [text])
        return {"message_id": message_id, "chat": {"id": chat_id}, "text": text}

    async def _m_sendPhoto(self, params: dict[str, Any]) -> dict[str, Any]:
        chat_id = int(_need(params, "chat_id"))
        photo = _need(params, "photo")
        if not isinstance(photo, bytes) or not photo:
            raise _BadRequest("photo must be an uploaded file (multipart/form-data)")
        caption = str(params.get("caption", ""))
        if len(caption) > 1024:
            raise _BadRequest("message caption is too long")
        message_id = next(self._message_ids)
        self.photos.append(SentPhoto(chat_id, message_id, photo, caption))
        return {"message_id": message_id, "chat": {"id": chat_id}, "caption": caption}

    async def _m_editMessageText(self, params: dict[str, Any]) -> dict[str, Any]:
        message_id = int(_need(params, "message_id"))
        text = str(_need(params, "text"))
        message = self.messages.get(message_id)
        if message is None:
            raise _BadRequest("message to edit not found")
        if len(text) > 4096:
            raise _BadRequest("message is too long")
        if text == message.text and _markup(params.get("reply_markup")) == message.reply_markup:
            raise _BadRequest("message is not modified")
        message.text = text
        message.reply_markup = _markup(params.get("reply_markup"))
        message.edits += 1
        message.history.append(text)
        return {"message_id": message_id, "chat": {"id": message.chat_id}, "text": text}

    async def _m_answerCallbackQuery(self, params: dict[str, Any]) -> bool:
        _need(params, "callback_query_id")
        return True

    async def _m_sendChatAction(self, params: dict[str, Any]) -> bool:
        _need(params, "chat_id")
        return True

    async def _m_setMyCommands(self, params: dict[str, Any]) -> bool:
        commands = params.get("commands")
        if isinstance(commands, str):
            commands = json.loads(commands)
        if not isinstance(commands, list):
            raise _BadRequest("commands must be a list")
        self.commands = commands
        return True


class _BadRequest(Exception):
    pass


def _need(params: dict[str, Any], key: str) -> Any:
    if key not in params:
        raise _BadRequest(f"{key} is required")
    return params[key]


def _markup(value: Any) -> dict[str, Any] | None:
    if isinstance(value, str):
        value = json.loads(value)
    return value if isinstance(value, dict) else None


def _params(request: RecordedRequest) -> dict[str, Any]:
    """JSON, form or query parameters (the Bot API takes each)."""
    kind = request.headers.get("content-type", "")
    if not request.body:
        return {}
    if kind.startswith("application/json"):
        value = json.loads(request.body)
        return value if isinstance(value, dict) else {}
    if kind.startswith("application/x-www-form-urlencoded"):
        return dict(parse_qsl(request.body.decode("utf-8"), keep_blank_values=True))
    if kind.startswith("multipart/form-data"):
        return _multipart(kind, request.body)
    return {}


def _multipart(content_type: str, body: bytes) -> dict[str, Any]:
    """A multipart form: text fields as str, file fields as bytes."""
    message = BytesParser(policy=email.policy.HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + body
    )
    out: dict[str, Any] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if not isinstance(name, str):
            continue
        data = part.get_payload(decode=True)
        assert isinstance(data, bytes)
        out[name] = data if part.get_filename() else data.decode("utf-8")
    return out

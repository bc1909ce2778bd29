"""A thin async client of the Telegram Bot API on httpx.

Only what the channel uses: ``getUpdates`` (long poll), ``sendMessage``, ``editMessageText``,
``answerCallbackQuery``, ``sendChatAction``, ``setMyCommands``, ``getMe``. Bodies are JSON;
an ``ok: false`` answer becomes a :class:`~.errors.TelegramApiError` with its
``description``. Two connection pools: one for the long poll, one for sending, so a poll that
hangs never delays a reply.

The token is part of every URL (``/bot<token>/<method>``); the client never puts a URL into
an error or a log line, and httpx's own request log is kept quiet for its URLs.
"""

from __future__ import annotations

import json
import logging
import ssl
from collections.abc import Sequence
from typing import Any

from clawseed_edge.api.lazy import without_httpx_cli

from .errors import (
    TelegramApiError,
    TelegramConflict,
    TelegramRateLimited,
    TelegramUnauthorized,
    TelegramUnreachable,
)

without_httpx_cli()  # click and pygments (1.95 MB) came with httpx, for its command line only

import httpx  # noqa: E402

__all__ = ["DEFAULT_API_BASE", "MAX_REPLY_BYTES", "BotApi"]

log = logging.getLogger(__name__)

DEFAULT_API_BASE = "https://api.telegram.org"
#: A reply larger than this is refused (100 updates of long messages fit well within it).
MAX_REPLY_BYTES = 4 * 1024 * 1024
#: Descriptions echoed into errors are capped.
MAX_DESCRIPTION_CHARS = 300


class BotApi:
    """Calls the Bot API of one bot.

    Args:
        token: The bot token (from @BotFather). Never logged, never in an error.
        api_base: ``https://api.telegram.org`` or a local Bot API server / a test fake.
        timeout_s: Bound of a sending call.
        transport / poll_transport: httpx transports (tests).
    """

    def __init__(
        self,
        token: str,
        api_base: str = DEFAULT_API_BASE,
        *,
        timeout_s: float = 15.0,
        transport: httpx.AsyncBaseTransport | None = None,
        poll_transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        if not token:
            raise ValueError("the bot token is empty")
        self._token = token
        self.api_base = api_base.rstrip("/")
        self.timeout_s = timeout_s
        # One TLS context for both pools (loading the CA bundle costs ~2 MB each time); a
        # plain-HTTP base (a local Bot API server, a test fake) loads none.
        verify: ssl.SSLContext | bool = (
            httpx.create_ssl_context() if self.api_base.startswith("https://") else False
        )
        limits = httpx.Limits(max_connections=4, max_keepalive_connections=2)
        self._send = httpx.AsyncClient(
            timeout=timeout_s, limits=limits, transport=transport, verify=verify
        )
        self._poll = httpx.AsyncClient(
            timeout=timeout_s,
            limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
            transport=poll_transport,
            verify=verify,
        )
        self.closed = False

    def __repr__(self) -> str:  # never the token
        return f"BotApi({self.api_base!r})"

    # --- the methods ---------------------------------------------------------------------

    async def get_me(self) -> dict[str, Any]:
        return dict(await self.call("getMe"))

    async def get_updates(
        self,
        offset: int | None,
        *,
        timeout_s: int = 30,
        allowed_updates: Sequence[str] = ("message", "callback_query"),
        limit: int = 100,
    ) -> list[dict[str, Any]]:
        """Long-poll for updates after ``offset`` (which confirms every earlier one).

        The HTTP timeout is the poll's plus 30 s; the channel's watchdog (the poll's timeout
        plus a smaller margin) restarts a poll that hangs before that.
        """
        body: dict[str, Any] = {
            "timeout": timeout_s,
            "allowed_updates": list(allowed_updates),
            "limit": limit,
        }
        if offset is not None:
            body["offset"] = offset
        result = await self.call("getUpdates", body, poll=True, timeout_s=timeout_s + 30.0)
        if not isinstance(result, list):
            raise TelegramUnreachable("Telegram getUpdates answered something that is not a list")
        return [u for u in result if isinstance(u, dict)]

    async def send_message(
        self,
        chat_id: int,
        text: str,
        *,
        reply_markup: dict[str, Any] | None = None,
        parse_mode: str | None = None,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"chat_id": chat_id, "text": text}
        if reply_markup is not None:
            body["reply_markup"] = reply_markup
        if parse_mode:
            body["parse_mode"] = parse_mode
        return dict(await self.call("sendMessage", body))

    async def send_photo(self, chat_id: int, photo: bytes, caption: str = "") -> dict[str, Any]:
        """``sendPhoto`` with the JPEG uploaded (multipart); ``caption`` at most 1,024 chars."""
        body: dict[str, Any] = {"chat_id": chat_id}
        if caption:
            body["caption"] = caption[:1024]
        files = {"photo": ("snapshot.jpg", photo, "image/jpeg")}
        return dict(await self.call("sendPhoto", body, files=files))

    async def edit_message_text(
        self,
        chat_id: int,
        message_id: int,
        text: str,
        *,
        reply_markup: dict[str, Any] | None = None,
    ) -> Any:
        body: dict[str, Any] = {"chat_id": chat_id, "message_id": message_id, "text": text}
        if reply_markup is not None:
            body["reply_markup"] = reply_markup
        return await self.call("editMessageText", body)

    async def answer_callback_query(self, callback_query_id: str, text: str = "") -> Any:
        body: dict[str, Any] = {"callback_query_id": callback_query_id}
        if text:
            body["text"] = text[:200]
        return await self.call("answerCallbackQuery", body)

    async def send_chat_action(self, chat_id: int, action: str = "typing") -> Any:
        return await self.call("sendChatAction", {"chat_id": chat_id, "action": action})

    async def set_my_commands(self, commands: Sequence[tuple[str, str]]) -> Any:
        return await self.call(
            "setMyCommands",
            {"commands": [{"command": c, "description": d} for c, d in commands]},
        )

    # --- plumbing ------------------------------------------------------------------------

    async def call(
        self,
        method: str,
        body: dict[str, Any] | None = None,
        *,
        poll: bool = False,
        timeout_s: float | None = None,
        files: dict[str, tuple[str, bytes, str]] | None = None,
    ) -> Any:
        """POST ``body`` as JSON to ``method`` (as multipart form fields with ``files``, each
        ``field -> (file name, bytes, content type)``); returns the answer's ``result``.

        Raises:
            TelegramUnauthorized / TelegramConflict / TelegramRateLimited / TelegramApiError:
                The Bot API said no (its description is in the message).
            TelegramUnreachable: No usable answer (network, timeout, not JSON, too large).
        """
        if self.closed:
            raise TelegramUnreachable("the Telegram client is closed")
        client = self._poll if poll else self._send
        url = f"{self.api_base}/bot{self._token}/{method}"
        try:
            timeout = timeout_s if timeout_s is not None else self.timeout_s
            if files:
                fields = {k: str(v) for k, v in (body or {}).items()}
                response = await client.post(url, data=fields, files=files, timeout=timeout)
            else:
                response = await client.post(url, json=body or {}, timeout=timeout)
            content = response.content
        except httpx.TimeoutException:
            raise TelegramUnreachable(f"Telegram {method}: no answer in time") from None
        except httpx.HTTPError as exc:
            # The exception's text may hold the URL (with the token): only its type is told.
            raise TelegramUnreachable(
                f"Telegram {method}: {type(exc).__name__} (is the network up, and is "
                f"{self.api_base} reachable?)"
            ) from None
        if len(content) > MAX_REPLY_BYTES:
            raise TelegramUnreachable(f"Telegram {method}: the answer is too large")
        try:
            answer = json.loads(content)
        except ValueError:
            raise TelegramUnreachable(
                f"Telegram {method}: HTTP {response.status_code} with a body that is not JSON"
            ) from None
        if not isinstance(answer, dict):
            raise TelegramUnreachable(f"Telegram {method}: the answer is not a JSON object")
        if answer.get("ok") is True:
            return answer.get("result")
        status = int(answer.get("error_code") or response.status_code)
        description = str(answer.get("description") or "no description")
        description = description.replace(self._token, "[redacted]")[:MAX_DESCRIPTION_CHARS]
        if status == 401:
            raise TelegramUnauthorized(method, status, description)
        if status == 409:
            raise TelegramConflict(method, status, description)
        if status == 429:
            params = answer.get("parameters")
            retry = params.get("retry_after", 1) if isinstance(params, dict) else 1
            try:
                retry_after = min(max(float(retry), 0.0), 3600.0)
            except (TypeError, ValueError):
                retry_after = 1.0
            raise TelegramRateLimited(method, status, description, retry_after)
        raise TelegramApiError(method, status, description)

    async def aclose(self) -> None:
        """Close both connection pools. Idempotent."""
        if self.closed:
            return
        self.closed = True
        await self._poll.aclose()
        await self._send.aclose()

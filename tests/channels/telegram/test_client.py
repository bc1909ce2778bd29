"""The Bot API client against the fake: JSON bodies, errors with descriptions, no token."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from clawseed_edge.channels.telegram.client import BotApi
from clawseed_edge.channels.telegram.errors import (
    TelegramApiError,
    TelegramConflict,
    TelegramRateLimited,
    TelegramUnauthorized,
    TelegramUnreachable,
)
from clawseed_edge.testing.fake_servers import FakeBotApi

from .conftest import TOKEN


async def test_methods_send_json_and_updates_are_confirmed_by_offset(bot: FakeBotApi) -> None:
    api = BotApi(TOKEN, bot.url)
    try:
        assert (await api.get_me())["username"] == bot.username
        first = bot.push_message(1, "one")
        bot.push_message(1, "two")
        updates = await api.get_updates(None, timeout_s=0)
        assert [u["message"]["text"] for u in updates] == ["one", "two"]
        again = await api.get_updates(first + 1, timeout_s=0)
        assert [u["message"]["text"] for u in again] == ["two"], "the first was confirmed"
        sent = await api.send_message(1, "hello", reply_markup={"inline_keyboard": []})
        await api.edit_message_text(1, sent["message_id"], "hello again")
        await api.answer_callback_query("cb1", "ok")
        await api.send_chat_action(1)
        await api.set_my_commands([("stop", "Emergency stop")])
    finally:
        await api.aclose()
    assert bot.messages[sent["message_id"]].text == "hello again"
    assert bot.commands == [{"command": "stop", "description": "Emergency stop"}]
    (poll, *_) = bot.calls_of("getUpdates")
    assert poll.params["allowed_updates"] == ["message", "callback_query"]
    assert all(r.headers["content-type"] == "application/json" for r in bot.requests)


async def test_a_long_poll_waits_for_the_next_update(bot: FakeBotApi) -> None:
    api = BotApi(TOKEN, bot.url)
    try:
        poll = asyncio.create_task(api.get_updates(None, timeout_s=5))
        await bot.wait_until(lambda: bot.calls_of("getUpdates"), what="the poll")
        assert not poll.done()
        bot.push_message(1, "now")
        updates = await poll
    finally:
        await api.aclose()
    assert updates[0]["message"]["text"] == "now"


@pytest.mark.parametrize(
    ("status", "error"),
    [
        (401, TelegramUnauthorized),
        (409, TelegramConflict),
        (429, TelegramRateLimited),
        (400, TelegramApiError),
        (502, TelegramApiError),
    ],
)
async def test_a_refusal_is_an_error_with_its_description(
    bot: FakeBotApi, status: int, error: type[Exception]
) -> None:
    bot.fail("sendMessage", status, f"Bad thing {status}", retry_after=7)
    api = BotApi(TOKEN, bot.url)
    try:
        with pytest.raises(error) as caught:
            await api.send_message(1, "x")
    finally:
        await api.aclose()
    assert f"Bad thing {status}" in str(caught.value)
    assert "sendMessage" in str(caught.value)
    assert TOKEN not in str(caught.value)
    if status == 429:
        assert isinstance(caught.value, TelegramRateLimited)
        assert caught.value.retry_after == 7


async def test_an_unreachable_api_names_no_token() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError(f"cannot connect to {request.url}")

    api = BotApi(TOKEN, "http://127.0.0.1:9", transport=httpx.MockTransport(refuse))
    try:
        with pytest.raises(TelegramUnreachable) as caught:
            await api.send_message(1, "x")
    finally:
        await api.aclose()
    assert TOKEN not in str(caught.value) and TOKEN not in repr(caught.value)
    assert caught.value.__cause__ is None and caught.value.__context__ is not None
    assert TOKEN not in repr(api)


async def test_polling_and_sending_use_separate_pools(bot: FakeBotApi) -> None:
    bot.hang("getUpdates")
    api = BotApi(TOKEN, bot.url)
    try:
        poll = asyncio.create_task(api.get_updates(None, timeout_s=30))
        await bot.wait_until(lambda: bot.calls_of("getUpdates"), what="the poll")
        sent = await asyncio.wait_for(api.send_message(1, "while polling"), 5)
        assert sent["text"] == "while polling"
        poll.cancel()
        await asyncio.gather(poll, return_exceptions=True)
    finally:
        await api.aclose()


async def test_the_fake_takes_form_bodies_and_refuses_a_wrong_token(bot: FakeBotApi) -> None:
    async with httpx.AsyncClient() as http:
        ok = await http.post(
            f"{bot.url}/bot{TOKEN}/sendMessage", data={"chat_id": "5", "text": "x"}
        )
        bad = await http.post(f"{bot.url}/bot1:wrong/getMe", json={})
    assert ok.json()["ok"] is True and bot.texts_to(5) == ["x"]
    assert bad.status_code == 401 and bad.json()["description"] == "Unauthorized"


async def test_the_channel_is_a_channel() -> None:
    from clawseed_edge.api import Channel
    from clawseed_edge.channels.telegram import TelegramChannel
    from clawseed_edge.config.schema import TelegramSettings

    class NoConversations:
        def abort_all(self, reason: str, channel: str | None = None) -> int:
            return 0

    channel = TelegramChannel(
        TelegramSettings(allowed_users=[1]),
        TOKEN,
        conversations=NoConversations(),  # type: ignore[arg-type]
    )
    assert isinstance(channel, Channel)
    assert channel.answerers == 0, "not polling yet"
    assert TOKEN not in repr(channel.api) and TOKEN not in str(channel.describe())
    await channel.api.aclose()

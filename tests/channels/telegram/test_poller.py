"""A poller that does not die: 409, 5xx, 429, a lost network, a hung poll; 401 stops it."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from clawseed_edge.api import ChatRequest, StreamDone, StreamEvent, TextDelta
from clawseed_edge.testing import ScriptedProvider
from clawseed_edge.testing.fake_servers import FakeBotApi

from .conftest import OWNER, TOKEN, config, running_bot, telegram_of


async def test_conflict_and_server_errors_are_retried(
    clawseed_home: Path, bot: FakeBotApi, caplog: pytest.LogCaptureFixture
) -> None:
    bot.fail("getUpdates", 409, times=2)
    bot.fail("getUpdates", 500)
    provider = ScriptedProvider(["Still here."], streaming=True)
    async with running_bot(clawseed_home, bot, provider) as service:
        bot.push_message(OWNER, "hello?")
        await bot.wait_for_message(OWNER, "Still here.")
        channel = telegram_of(service)
        assert channel.counters["poll_errors"] == 3
        assert channel.state == "polling"
    assert "another process polls with this token" in caplog.text


async def test_a_lost_network_is_survived(clawseed_home: Path, bot: FakeBotApi) -> None:
    provider = ScriptedProvider(["Before.", "After."], streaming=True)
    async with running_bot(clawseed_home, bot, provider) as service:
        channel = telegram_of(service)
        bot.push_message(OWNER, "one")
        await bot.wait_for_message(OWNER, "Before.")
        port, next_id = bot.port, bot.next_update_id
        await bot.aclose()  # the network goes away
        await asyncio.sleep(0)
        await bot.wait_until(lambda: channel.state == "retrying", what="retrying")
        assert "reachable" in channel.detail
        async with FakeBotApi(
            token=TOKEN, port=port, max_poll_s=1.0, first_update_id=next_id
        ) as back:
            back.push_message(OWNER, "two")
            await back.wait_for_message(OWNER, "After.")
            assert channel.state == "polling"


async def test_a_hung_poll_is_restarted_by_the_watchdog(
    clawseed_home: Path, bot: FakeBotApi
) -> None:
    bot.hang("getUpdates")
    provider = ScriptedProvider(["Awake."], streaming=True)
    async with running_bot(clawseed_home, bot, provider, telegram={"watchdog_margin_s": 0.3}) as s:
        channel = telegram_of(s)
        bot.push_message(OWNER, "anyone?")
        await bot.wait_for_message(OWNER, "Awake.")
        assert channel.counters["watchdog_restarts"] == 1


async def test_rate_limits_are_obeyed(clawseed_home: Path, bot: FakeBotApi) -> None:
    bot.fail("sendMessage", 429, retry_after=0.2)
    bot.fail("getUpdates", 429, retry_after=0.1)
    provider = ScriptedProvider(["Slowly."], streaming=True)
    async with running_bot(clawseed_home, bot, provider):
        bot.push_message(OWNER, "hi")
        await bot.wait_for_message(OWNER, "Slowly.")
    sends = [c.answered for c in bot.calls_of("sendMessage")]
    assert sends[:2] == ["429", "ok"], "sent again after retry_after"


async def test_a_refused_token_stops_the_channel_and_says_why(
    clawseed_home: Path, bot: FakeBotApi, caplog: pytest.LogCaptureFixture
) -> None:
    bot.token = "123:another-token"  # the service's token is refused: 401
    provider = ScriptedProvider([], streaming=True)
    from clawseed_edge.testing.gateway import running_gateway

    from .conftest import FAST

    async with running_gateway(
        clawseed_home, provider, config(bot), channels={"telegram": FAST}
    ) as gw:
        channel = telegram_of(gw.service)
        await bot.wait_until(lambda: channel.state == "failed", what="failed state")
        status = await gw.service._op_status({})
        calls = len(bot.calls)
        await asyncio.sleep(0.3)
        assert len(bot.calls) == calls, "no more polling after 401"
    (telegram,) = status["channels"]
    assert telegram["state"] == "failed"
    assert (
        "BotFather" in telegram["detail"] and "secrets set TELEGRAM_BOT_TOKEN" in telegram["detail"]
    )
    assert any(r.levelno == logging.ERROR and "BotFather" in r.getMessage() for r in caplog.records)
    assert TOKEN not in caplog.text


class SlowStream(ScriptedProvider):
    """Streams its answer one word every 20 ms."""

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        response = await self._next(request)
        for word in response.text.split(" "):
            await asyncio.sleep(0.02)
            yield TextDelta(word + " ")
        yield StreamDone(response)


async def test_a_streamed_answer_is_edited_at_a_bounded_rate(
    clawseed_home: Path, bot: FakeBotApi
) -> None:
    words = " ".join(f"word{i}" for i in range(100))
    provider = SlowStream([words], streaming=True)
    async with running_bot(clawseed_home, bot, provider):
        bot.push_message(OWNER, "talk")
        message = await bot.wait_for_message(OWNER, "word99")
    (only,) = bot.sent_to(OWNER)
    assert only is message
    assert 1 <= message.edits <= 4, "about 2 s of streaming: at most one edit a second"
    assert message.history[0] != message.text, "it was shown while it streamed"

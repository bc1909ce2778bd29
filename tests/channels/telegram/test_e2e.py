"""End to end: the service hosts the bot; people write to it through the fake Bot API."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from clawseed_edge.testing import ScriptedProvider
from clawseed_edge.testing.fake_servers import FakeBotApi
from clawseed_edge.testing.hardware import pin_level

from .conftest import OWNER, STRANGER, TOKEN, running_bot, telegram_of


async def test_an_allowed_user_switches_the_led(clawseed_home: Path, bot: FakeBotApi) -> None:
    provider = ScriptedProvider(
        [ScriptedProvider.call("gpio_switch", device="porch_light", on=True), "The light is on."],
        streaming=True,
    )
    async with running_bot(clawseed_home, bot, provider) as service:
        assert service.runtime is not None
        (gpio,) = service.runtime.peripherals
        assert pin_level(gpio, "porch_light") == 0
        bot.push_message(OWNER, "switch the porch light on")
        reply = await bot.wait_for_message(OWNER, "The light is on.")
        assert pin_level(gpio, "porch_light") == 1
    assert "gpio_switch" in reply.text  # the tool activity line
    assert bot.calls_of("sendChatAction"), "typing… while the turn ran"
    assert [c["command"] for c in bot.commands] == ["start", "help", "status", "stop", "reset"]
    assert bot.confirmed_offset is not None and bot.confirmed_offset >= 2, "update confirmed"
    assert provider.requests[0].messages[-1].content.endswith("switch the porch light on")


async def test_a_stranger_reaches_no_model_and_no_tool(
    clawseed_home: Path, bot: FakeBotApi
) -> None:
    provider = ScriptedProvider(
        [ScriptedProvider.call("gpio_switch", device="porch_light", on=True), "On."],
        streaming=True,
    )
    async with running_bot(clawseed_home, bot, provider) as service:
        assert service.runtime is not None
        (gpio,) = service.runtime.peripherals
        bot.push_message(STRANGER, "switch the porch light on")
        bot.push_message(STRANGER, "please")
        refusal = await bot.wait_for_message(STRANGER, str(STRANGER))
        # The owner's message after the stranger's is served: the stranger's were handled.
        bot.push_message(OWNER, "/help")
        await bot.wait_for_message(OWNER, "/stop")
        assert pin_level(gpio, "porch_light") == 0
        assert telegram_of(service).counters["strangers_refused"] == 2
    assert provider.requests == [], "nothing of the stranger's reached the model"
    assert len(bot.sent_to(STRANGER)) == 1, "one short reply, not one per message"
    assert "allowed_users" in refusal.text


async def test_a_long_answer_arrives_split_on_line_boundaries(
    clawseed_home: Path, bot: FakeBotApi
) -> None:
    answer = "\n".join(f"line {i:04d} " + "x" * 90 for i in range(100))  # 10,000 characters
    assert len(answer) >= 10_000
    provider = ScriptedProvider([answer], streaming=True)
    async with running_bot(clawseed_home, bot, provider):
        bot.push_message(OWNER, "tell me a lot")
        await bot.wait_until(
            lambda: len(bot.sent_to(OWNER)) >= 3 and "line 0099" in bot.sent_to(OWNER)[-1].text,
            what="the last part",
        )
        parts = bot.texts_to(OWNER)
    assert len(parts) == 3
    assert all(len(p) <= 4096 for p in parts)
    assert "\n".join(parts) == answer, "cut at line boundaries, nothing lost"


async def test_stop_drives_outputs_safe(clawseed_home: Path, bot: FakeBotApi) -> None:
    provider = ScriptedProvider(
        [ScriptedProvider.call("gpio_switch", device="porch_light", on=True), "On."],
        streaming=True,
    )
    async with running_bot(clawseed_home, bot, provider) as service:
        assert service.runtime is not None
        (gpio,) = service.runtime.peripherals
        bot.push_message(OWNER, "light on")
        await bot.wait_for_message(OWNER, "On.")
        assert pin_level(gpio, "porch_light") == 1
        bot.push_message(OWNER, "/stop")
        await bot.wait_for_message(OWNER, "Emergency stop")
        assert pin_level(gpio, "porch_light") == 0
        assert service.emergency_stop is not None and service.emergency_stop.count == 1


async def test_the_token_is_in_no_log_line(
    clawseed_home: Path, bot: FakeBotApi, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    bot.fail("getUpdates", 502, times=2)
    bot.drop("getUpdates")
    provider = ScriptedProvider(["Hello."], streaming=True)
    async with running_bot(clawseed_home, bot, provider) as service:
        bot.push_message(OWNER, "hi")
        await bot.wait_for_message(OWNER, "Hello.")
        status = await service._op_status({})
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "502" in text, "the failures were logged"
    assert TOKEN not in text
    assert TOKEN.split(":")[1] not in text
    assert TOKEN not in str(status)


async def test_commands(clawseed_home: Path, bot: FakeBotApi) -> None:
    provider = ScriptedProvider(["First.", "Second."], streaming=True)
    async with running_bot(clawseed_home, bot, provider) as service:
        bot.push_message(OWNER, "/start")
        hello = await bot.wait_for_message(OWNER, "Hello")
        bot.push_message(OWNER, "/status")
        status = await bot.wait_for_message(OWNER, "pi: sim with 1 device")
        assert "porch_light (led): off" in status.text
        bot.push_message(OWNER, "remember me")
        await bot.wait_for_message(OWNER, "First.")
        bot.push_message(OWNER, "/reset")
        await bot.wait_for_message(OWNER, "A new conversation")
        bot.push_message(OWNER, "who am I?")
        await bot.wait_for_message(OWNER, "Second.")
        bot.push_message(OWNER, "/frobnicate")
        await bot.wait_for_message(OWNER, "Unknown command /frobnicate")
        sessions = {c.session_id for c in service.channels[0].conversations.all()}
    assert str(OWNER) in hello.text and "/stop" in hello.text
    assert len(provider.requests) == 2
    assert "remember me" not in str(provider.requests[1].messages), "a new conversation"
    assert len(sessions) == 1


async def test_group_chats_are_not_served(clawseed_home: Path, bot: FakeBotApi) -> None:
    provider = ScriptedProvider(["Private."], streaming=True)
    async with running_bot(clawseed_home, bot, provider):
        bot.push_message(OWNER, "hello group", chat_id=-100123, chat_type="supergroup")
        bot.push_message(OWNER, "hello me")
        await bot.wait_for_message(OWNER, "Private.")
    assert bot.sent_to(-100123) == []
    assert len(provider.requests) == 1


async def test_job_answers_reach_the_allowed_users(clawseed_home: Path, bot: FakeBotApi) -> None:
    async with running_bot(clawseed_home, bot, ScriptedProvider([], streaming=True)) as service:
        reached = service.notifications.notify(
            {"type": "job_result", "job": "morning", "text": "It is 7 °C outside.", "at": 0}
        )
        message = await bot.wait_for_message(OWNER, "morning")
    assert reached == 1
    assert message.text == "Scheduled job morning: It is 7 °C outside."
    assert bot.sent_to(STRANGER) == []


async def test_groups_when_configured_only_mentions_from_allowed_users(
    clawseed_home: Path, bot: FakeBotApi
) -> None:
    from .conftest import config

    text = config(bot).replace("poll_timeout_s = 1", "poll_timeout_s = 1\ngroups = true")
    provider = ScriptedProvider(["For the group."], streaming=True)
    group = -100777
    async with running_bot(clawseed_home, bot, provider, text):
        bot.push_message(OWNER, "not for the bot", chat_id=group, chat_type="supergroup")
        bot.push_message(STRANGER, f"@{bot.username} hi", chat_id=group, chat_type="supergroup")
        bot.push_message(OWNER, f"@{bot.username} hello", chat_id=group, chat_type="supergroup")
        await bot.wait_for_message(group, "For the group.")
    assert len(provider.requests) == 1
    assert provider.requests[0].messages[-1].content.endswith("hello")
    assert bot.username not in provider.requests[0].messages[-1].content
    assert len(bot.sent_to(group)) == 1

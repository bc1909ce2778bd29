"""Approvals as inline buttons: approve, deny, a stranger's press ignored, no answer in time."""

from __future__ import annotations

from pathlib import Path

import pytest

from clawseed_edge.testing import ScriptedProvider
from clawseed_edge.testing.fake_servers import FakeBotApi, SentMessage
from clawseed_edge.testing.hardware import pin_level

from .conftest import OWNER, STRANGER, config, running_bot, telegram_of


def provider() -> ScriptedProvider:
    return ScriptedProvider(
        [ScriptedProvider.call("gpio_switch", device="porch_light", on=True), "Finished."],
        streaming=True,
    )


def button(message: SentMessage, label: str) -> str:
    assert message.reply_markup is not None
    row = message.reply_markup["inline_keyboard"][0]
    return str(next(b["callback_data"] for b in row if label in b["text"]))


@pytest.mark.parametrize("approved", [True, False])
async def test_a_button_decides(clawseed_home: Path, bot: FakeBotApi, approved: bool) -> None:
    text = config(bot, level="supervised")
    async with running_bot(clawseed_home, bot, provider(), text) as service:
        assert service.runtime is not None
        (gpio,) = service.runtime.peripherals
        bot.push_message(OWNER, "light on")
        ask = await bot.wait_for_message(OWNER, "Approval needed")
        assert "Device: porch_light" in ask.text and "Value: 1" in ask.text
        assert pin_level(gpio, "porch_light") == 0, "nothing switched before the answer"
        bot.push_callback(OWNER, ask.message_id, button(ask, "Approve" if approved else "Deny"))
        await bot.wait_for_message(OWNER, "Finished.")
        await bot.wait_until(lambda: "by Tester" in ask.text, what="the decision shown")
        level = pin_level(gpio, "porch_light")
    assert level == (1 if approved else 0)
    assert ("Approved by Tester" if approved else "Denied by Tester") in ask.text
    assert ask.reply_markup is None, "the buttons are gone once decided"
    assert bot.calls_of("answerCallbackQuery"), "the press was answered"


async def test_a_strangers_press_is_ignored(clawseed_home: Path, bot: FakeBotApi) -> None:
    text = config(bot, level="supervised")
    async with running_bot(clawseed_home, bot, provider(), text) as service:
        assert service.runtime is not None and service.runtime is not None
        (gpio,) = service.runtime.peripherals
        bot.push_message(OWNER, "light on")
        ask = await bot.wait_for_message(OWNER, "Approval needed")
        bot.push_callback(STRANGER, ask.message_id, button(ask, "Approve"))
        await bot.wait_until(
            lambda: len(bot.calls_of("answerCallbackQuery")) == 1, what="the stranger answered"
        )
        assert pin_level(gpio, "porch_light") == 0
        channel = telegram_of(service)
        assert channel.broker is not None and len(channel.broker.pending()) == 1
        bot.push_callback(OWNER, ask.message_id, button(ask, "Deny"))
        await bot.wait_for_message(OWNER, "Finished.")
        level = pin_level(gpio, "porch_light")
    assert level == 0
    assert "Denied by Tester" in ask.text


async def test_no_answer_in_time_is_a_refusal_the_message_shows(
    clawseed_home: Path, bot: FakeBotApi
) -> None:
    text = config(bot, level="supervised", approval_timeout_s=0.5)
    async with running_bot(clawseed_home, bot, provider(), text) as service:
        assert service.runtime is not None
        (gpio,) = service.runtime.peripherals
        bot.push_message(OWNER, "light on")
        ask = await bot.wait_for_message(OWNER, "Approval needed")
        await bot.wait_for_message(OWNER, "Finished.")
        await bot.wait_until(lambda: "refused" in ask.text, what="the refusal shown")
        level = pin_level(gpio, "porch_light")
    assert level == 0
    assert ask.reply_markup is None

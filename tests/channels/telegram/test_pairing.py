"""``/pair <code>`` with a code from ``clawseed-edge pair --telegram``."""

from __future__ import annotations

import stat
from pathlib import Path

from clawseed_edge.service import control_path, control_request
from clawseed_edge.testing import ScriptedProvider
from clawseed_edge.testing.fake_servers import FakeBotApi

from .conftest import OWNER, STRANGER, running_bot


async def test_a_one_time_code_allows_a_new_user(clawseed_home: Path, bot: FakeBotApi) -> None:
    provider = ScriptedProvider(["Welcome.", "Still you."], streaming=True)
    async with running_bot(clawseed_home, bot, provider, control_socket=True):
        answer = await control_request(
            control_path(clawseed_home), "pair", channel="telegram", id=""
        )
        code = answer["code"]
        bot.push_message(STRANGER, "/pair 00000000")
        await bot.wait_for_message(STRANGER, "does not work")
        bot.push_message(STRANGER, f"/pair {code}")
        await bot.wait_for_message(STRANGER, "Paired")
        bot.push_message(STRANGER, "hello")
        await bot.wait_for_message(STRANGER, "Welcome.")
        bot.push_message(OWNER + 1, f"/pair {code}")  # used: it works once
        await bot.wait_for_message(OWNER + 1, "does not work")
    saved = clawseed_home / "telegram-paired.json"
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    assert str(STRANGER) in saved.read_text()
    # Kept across a restart.
    async with running_bot(clawseed_home, bot, provider):
        bot.push_message(STRANGER, "again")
        await bot.wait_for_message(STRANGER, "Still you.")
    assert len(provider.requests) == 2


async def test_wrong_codes_end_the_code(clawseed_home: Path, bot: FakeBotApi) -> None:
    async with running_bot(clawseed_home, bot, ScriptedProvider([], streaming=True)) as service:
        answer = await service._op_pair({"channel": "telegram"})
        for i in range(10):
            bot.push_message(STRANGER, f"/pair {i:08d}x")
        await bot.wait_until(lambda: len(bot.sent_to(STRANGER)) == 10, what="ten refusals")
        bot.push_message(STRANGER, f"/pair {answer['code']}")
        await bot.wait_until(lambda: len(bot.sent_to(STRANGER)) == 11, what="the last refusal")
    assert "does not work" in bot.sent_to(STRANGER)[-1].text

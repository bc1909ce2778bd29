"""``/pair <code>`` with a code from ``clawseed-edge pair --telegram``; the paired users live
in the one pairing store (state.db), seen and revoked by ``pair --list`` / ``--revoke``."""

from __future__ import annotations

import json
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
    # Kept across a restart, in state.db (no file of its own).
    assert not (clawseed_home / "telegram-paired.json").exists()
    async with running_bot(clawseed_home, bot, provider, control_socket=True):
        bot.push_message(STRANGER, "again")
        await bot.wait_for_message(STRANGER, "Still you.")
        listed = await control_request(control_path(clawseed_home), "pair_list", id="")
        assert f"telegram-{STRANGER}" in [t["id"] for t in listed["tokens"]]
        # Revoked: served no more, at once.
        answer = await control_request(
            control_path(clawseed_home), "pair_revoke", id=f"telegram-{STRANGER}"
        )
        assert answer["revoked"] is True
        bot.push_message(STRANGER, "and now?")
        await bot.wait_for_message(STRANGER, "serves its owner only")
    assert len(provider.requests) == 2


async def test_the_old_paired_file_moves_into_state_db_once(
    clawseed_home: Path, bot: FakeBotApi
) -> None:
    old = clawseed_home / "telegram-paired.json"
    old.write_text(json.dumps({"users": [STRANGER]}), encoding="utf-8")
    provider = ScriptedProvider(["Hello again."], streaming=True)
    async with running_bot(clawseed_home, bot, provider, control_socket=True):
        assert not old.exists(), "moved, then removed"
        bot.push_message(STRANGER, "hi")
        await bot.wait_for_message(STRANGER, "Hello again.")
        listed = await control_request(control_path(clawseed_home), "pair_list", id="")
    assert [t["id"] for t in listed["tokens"]] == [f"telegram-{STRANGER}"]


async def test_wrong_codes_end_the_code(clawseed_home: Path, bot: FakeBotApi) -> None:
    async with running_bot(clawseed_home, bot, ScriptedProvider([], streaming=True)) as service:
        answer = await service._op_pair({"channel": "telegram"})
        for i in range(10):
            bot.push_message(STRANGER, f"/pair {i:08d}x")
        await bot.wait_until(lambda: len(bot.sent_to(STRANGER)) == 10, what="ten refusals")
        bot.push_message(STRANGER, f"/pair {answer['code']}")
        await bot.wait_until(lambda: len(bot.sent_to(STRANGER)) == 11, what="the last refusal")
    assert "does not work" in bot.sent_to(STRANGER)[-1].text

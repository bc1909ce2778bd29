"""Issue 35 item 1: an approval button is bound to its request, and dies with it.

The owner is asked to switch the pump; the service is killed (SIGKILL, as a power cut or the
OOM killer would); after the restart the model asks to switch the door lock. The old pump
button, pressed now, does nothing (the door lock never switches, its pin history shows no
pulse) and is answered "Expired."; the old message itself was edited to "expired" at start.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from clawseed_edge.testing import ScriptedProvider
from clawseed_edge.testing.fake_servers import FakeBotApi, SentMessage
from clawseed_edge.testing.hardware import mock_pin

from .conftest import FAST, OWNER, TOKEN
from .test_approvals import button

CONFIG = """
[provider]
name = "demo"
[autonomy]
level = "supervised"
approval_timeout_s = 60
[channels.telegram]
enabled = true
allowed_users = [{owner}]
api_base = "{api_base}"
poll_timeout_s = 1
[hardware]
board = "sim"
[[devices]]
name = "pump"
pin = "GPIO17"
kind = "relay"
[[devices]]
name = "door_lock"
pin = "GPIO27"
kind = "relay"
"""


def wait(predicate: object, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def asked_before_a_kill(home: Path, bot: FakeBotApi) -> SentMessage:
    """``run`` as a process asks the owner about the pump, then dies by SIGKILL."""
    (home / "config.toml").write_text(CONFIG.format(owner=OWNER, api_base=bot.url))
    proc = subprocess.Popen(
        [sys.executable, "-m", "clawseed_edge", "run", "--sim"],
        env={**os.environ, "TELEGRAM_BOT_TOKEN": TOKEN, "CLAWSEED_HOME": str(home)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        bot.push_message(OWNER, "turn on the pump")
        wait(lambda: any("Approval needed" in m.text for m in bot.sent_to(OWNER)), 60)
        # The message id reaches state.db right after the send returns; killed before that,
        # the old button still does nothing, but its message is not edited at the next start.
        time.sleep(1.0)
    finally:
        proc.send_signal(signal.SIGKILL)  # no clean stop: nothing of the request is resolved
        proc.wait(30)
    ask = next(m for m in bot.sent_to(OWNER) if "Approval needed" in m.text)
    assert "pump" in ask.text
    return ask


async def test_a_stale_button_after_a_restart_does_nothing(clawseed_home: Path) -> None:
    from clawseed_edge.config.file import load_config
    from clawseed_edge.service import Service, ServiceOptions

    with FakeBotApi(token=TOKEN, max_poll_s=1.0) as bot:
        old = await asyncio.to_thread(asked_before_a_kill, clawseed_home, bot)
        stale = button(old, "Approve")
        provider = ScriptedProvider(
            [ScriptedProvider.call("gpio_switch", device="door_lock", on=True), "Done."],
            streaming=True,
        )
        loaded = load_config(clawseed_home / "config.toml")
        options = ServiceOptions(
            sim=True,
            assemble={"provider": provider},
            say=lambda line: None,
            control_socket=False,
            channels={"telegram": FAST},
        )
        async with Service(loaded, options) as service:
            assert service.runtime is not None
            (gpio,) = service.runtime.peripherals
            lock = mock_pin(gpio, "door_lock")
            # At start, the message left by the killed process says it expired.
            await bot.wait_until(lambda: "Expired" in old.text, what="the old message expired")
            assert old.reply_markup is None, "its buttons are gone"
            bot.push_message(OWNER, "lock the door")
            new = await bot.wait_for_message(OWNER, "door_lock")
            assert button(new, "Approve") != stale
            answered = len(bot.calls_of("answerCallbackQuery"))
            bot.push_callback(OWNER, old.message_id, stale)  # the owner presses the OLD button
            await bot.wait_until(
                lambda: len(bot.calls_of("answerCallbackQuery")) > answered, what="an answer"
            )
            reply = bot.calls_of("answerCallbackQuery")[-1]
            assert "Expired" in str(reply.params)
            # A button for this very request with another action's hash does nothing either.
            _, request_id, _, _ = button(new, "Approve").split(":")
            answered = len(bot.calls_of("answerCallbackQuery"))
            bot.push_callback(OWNER, new.message_id, f"ap:{request_id}:{'0' * 12}:1")
            await bot.wait_until(
                lambda: len(bot.calls_of("answerCallbackQuery")) > answered, what="an answer"
            )
            assert "Expired" in str(bot.calls_of("answerCallbackQuery")[-1].params)
            channel = next(c for c in service.channels if c.name == "telegram")
            assert channel.broker is not None and len(channel.broker.pending()) == 1
            bot.push_callback(OWNER, new.message_id, button(new, "Deny"))
            await bot.wait_for_message(OWNER, "Done.")
            history = [s.state for s in lock.states]
    assert len(set(history)) == 1, f"the door lock switched: {history}"

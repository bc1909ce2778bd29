"""``clawseed-edge run --sim`` as a process, with the bot on: it serves, and its log (``-v``,
so INFO lines too) never holds the token, whatever failed on the way."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from clawseed_edge.testing.fake_servers import FakeBotApi

from .conftest import OWNER, STRANGER, TOKEN


def wait(predicate: object, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_run_serves_the_bot_and_logs_no_token(clawseed_home: Path) -> None:
    with FakeBotApi(token=TOKEN, max_poll_s=1.0) as bot:
        (clawseed_home / "config.toml").write_text(
            f"""
[provider]
name = "demo"
[autonomy]
level = "full"
[channels.telegram]
enabled = true
allowed_users = [{OWNER}]
api_base = "{bot.url}"
poll_timeout_s = 1
[hardware]
board = "sim"
[[devices]]
name = "red_led"
pin = "GPIO17"
kind = "led"
"""
        )
        bot.fail("getMe", 502)
        bot.drop("getUpdates")
        log = clawseed_home / "run.log"
        with log.open("w") as err:
            proc = subprocess.Popen(
                [sys.executable, "-m", "clawseed_edge", "run", "--sim", "-v"],
                env={**os.environ, "TELEGRAM_BOT_TOKEN": TOKEN},
                stdout=subprocess.DEVNULL,
                stderr=err,
            )
            try:
                bot.push_message(STRANGER, "hello")
                bot.push_message(OWNER, "turn on the red led")
                wait(lambda: bot.sent_to(STRANGER) and len(bot.sent_to(OWNER)) >= 1)
                wait(lambda: any("red" in m.text.lower() for m in bot.sent_to(OWNER)))
            finally:
                proc.send_signal(signal.SIGTERM)
                proc.wait(30)
    text = log.read_text()
    assert "Telegram bot @clawseed_test_bot is polling" in text
    assert "502" in text and "user id 6666" in text
    assert TOKEN not in text and TOKEN.split(":")[1] not in text
    assert proc.returncode == 0, text[-2000:]

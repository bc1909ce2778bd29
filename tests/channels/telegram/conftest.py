"""The service with the Telegram channel on, polling a fake Bot API on 127.0.0.1."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from clawseed_edge.service import Service
from clawseed_edge.testing import ScriptedProvider
from clawseed_edge.testing.fake_servers import FakeBotApi
from clawseed_edge.testing.gateway import running_gateway

TOKEN = "987654321:AAH-secret-test-token-value-xyz"
OWNER = 4242
STRANGER = 6666

CONFIG = """
[provider]
name = "demo"
[autonomy]
level = "{level}"
approval_timeout_s = {approval_timeout_s}
[gateway]
enabled = {gateway}
port = 0
[channels.telegram]
enabled = true
allowed_users = [{owner}]
api_base = "{api_base}"
poll_timeout_s = 1
[hardware]
board = "sim"
[[devices]]
name = "porch_light"
pin = "GPIO17"
kind = "led"
"""

#: Short waits for tests (the defaults are for a real network).
FAST = {"backoff_s": (0.05, 0.2), "watchdog_margin_s": 1.0}


def config(bot: FakeBotApi, **kw: Any) -> str:
    values = {
        "level": "full",
        "approval_timeout_s": 20,
        "gateway": "false",
        "owner": OWNER,
        "api_base": bot.url,
        **kw,
    }
    return CONFIG.format(**values)


@contextlib.asynccontextmanager
async def running_bot(
    home: Path, bot: FakeBotApi, provider: Any, text: str | None = None, **options: Any
) -> AsyncIterator[Service]:
    """The service (sim pins) with the bot polling ``bot``; its channel is polling on entry."""
    channels = {"telegram": {**FAST, **options.pop("telegram", {})}}
    async with running_gateway(
        home, provider, text or config(bot), channels=channels, **options
    ) as gw:
        service: Service = gw.service
        channel = telegram_of(service)
        await bot.wait_until(lambda: channel.state == "polling", what="polling state")
        yield service


def telegram_of(service: Service) -> Any:
    return next(c for c in service.channels if c.name == "telegram")


@pytest.fixture(autouse=True)
def bot_token(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", TOKEN)
    return TOKEN


@pytest.fixture
async def bot() -> AsyncIterator[FakeBotApi]:
    async with FakeBotApi(token=TOKEN, max_poll_s=1.0) as server:
        yield server


@pytest.fixture
def provider() -> ScriptedProvider:
    return ScriptedProvider(streaming=True)

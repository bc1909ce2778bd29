"""Fixtures of other test packages the camera tests use: the fake model servers of the provider
tests (vision turns) and the fake Bot API of the Telegram tests (photos to the phone)."""

from tests.channels.telegram.conftest import bot, bot_token
from tests.providers.conftest import anthropic_server, openai_server

__all__ = ["anthropic_server", "bot", "bot_token", "openai_server"]

"""The fake Anthropic and OpenAI-compatible servers of the provider tests, for the vision turns."""

from tests.providers.conftest import anthropic_server, openai_server

__all__ = ["anthropic_server", "openai_server"]

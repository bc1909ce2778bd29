"""Fake model servers on 127.0.0.1 that speak the real wire protocols, for tests.

:class:`FakeOllama` (NDJSON ``/api/chat``, ``/api/show``, ``/api/embed``, ``/api/tags``),
:class:`FakeAnthropic` (SSE ``/v1/messages``) and :class:`FakeOpenAI`
(``/v1/chat/completions`` as JSON or SSE, ``/v1/embeddings``) and :class:`FakeBotApi` (the
Telegram Bot API: scripted updates, failures per method) are small HTTP/1.1 servers on
``asyncio.start_server`` (one request per connection, ``Connection: close``; streams use chunked
transfer encoding). The real SDKs talk to them unchanged.

Script them per test by queueing :class:`Reply` objects; every request is recorded::

    async with FakeOllama(models={"qwen2.5:3b": ["completion", "tools"]}) as server:
        server.queue(Reply.tool_call("led_on", {"pin": 17}), Reply.text("The LED is on."))
        provider = OllamaProvider(ProviderConfig(base_url=server.url))
        ...
        assert server.requests[0].json["model"] == "qwen2.5:3b"

From a non-async test (or to point the CLI at one), use ``with``: the server then runs its own
event loop in a thread until the block ends. With no reply queued, the server answers with
``default_reply`` if set, else HTTP 500 "fake server: no reply queued".
"""

from .anthropic import FakeAnthropic
from .base import FakeModelServer, RecordedRequest, Reply
from .base import Handler as Handler  # re-exported: the route handler type
from .base import split_words as split_words  # re-exported: tests import it from here
from .ollama import FakeOllama
from .openai import FakeOpenAI
from .telegram import BotCall, FakeBotApi, SentMessage

__all__ = [
    "BotCall",
    "FakeAnthropic",
    "FakeBotApi",
    "FakeModelServer",
    "FakeOllama",
    "FakeOpenAI",
    "RecordedRequest",
    "Reply",
    "SentMessage",
]

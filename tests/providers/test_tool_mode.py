"""[provider] tool_mode: native tools, prompt-guided tools, or detected (issue 14 item 10).

The engine's ``select_dispatcher`` picks the prompt-guided path when
``capabilities.native_tools`` is False, so these tests check the capabilities.
"""

from __future__ import annotations

import pytest

from clawseed_edge.api import ProviderError
from clawseed_edge.providers import (
    AnthropicProvider,
    OllamaProvider,
    OpenAICompatProvider,
    ProviderConfig,
)
from clawseed_edge.testing.fake_servers import FakeOllama, FakeOpenAI, Reply

from .helpers import ask

LLAMA_TOOLS = "{% if tools %}<tools>{{ tools | tojson }}</tools>{% endif %}{{ messages }}"
LLAMA_PLAIN = "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{% endfor %}"


def openai(server: FakeOpenAI, **kw: object) -> OpenAICompatProvider:
    config = ProviderConfig(name="llamacpp", base_url=server.url + "/v1", **kw)  # type: ignore[arg-type]
    return OpenAICompatProvider(config)


@pytest.mark.parametrize(("mode", "native"), [("prompt", False), ("native", True)])
async def test_openai_compatible_tool_mode_is_obeyed(mode: str, native: bool) -> None:
    async with FakeOpenAI(props={"chat_template": LLAMA_PLAIN}) as server:
        provider = openai(server, tool_mode=mode)
        try:
            assert provider.capabilities.native_tools is native
            await provider.probe()  # an explicit mode is not overridden by detection
            assert provider.capabilities.native_tools is native
        finally:
            await provider.aclose()


@pytest.mark.parametrize(
    ("props", "native"),
    [
        ({"chat_template": LLAMA_PLAIN}, False),
        ({"chat_template": LLAMA_TOOLS}, True),
        ({"chat_template": LLAMA_TOOLS, "chat_template_caps": {"supports_tools": False}}, False),
        (None, True),  # not llama.cpp (no /props): native, the API's default
    ],
)
async def test_openai_compatible_auto_detects_a_tool_template(
    props: dict[str, object] | None, native: bool
) -> None:
    async with FakeOpenAI(props=props) as server:
        provider = openai(server)
        try:
            assert (await provider.probe()).native_tools is native
            assert provider.capabilities.native_tools is native
        finally:
            await provider.aclose()


async def test_openai_compatible_auto_falls_back_when_tools_are_refused() -> None:
    async with FakeOpenAI() as server:
        server.queue(Reply.error(400, "tools param requires --jinja flag"))
        provider = openai(server)
        try:
            with pytest.raises(ProviderError, match="describes tools in the prompt"):
                await provider.chat(ask())
            assert provider.capabilities.native_tools is False
        finally:
            await provider.aclose()


async def test_ollama_tool_mode_overrides_the_probe(ollama: FakeOllama) -> None:
    forced_prompt = OllamaProvider(ProviderConfig(base_url=ollama.url, tool_mode="prompt"))
    forced_native = OllamaProvider(
        ProviderConfig(base_url=ollama.url, model="gemma3:1b", tool_mode="native")
    )
    try:
        assert (await forced_prompt.probe()).native_tools is False  # qwen2.5 has tools
        assert (await forced_native.probe()).native_tools is True  # gemma3:1b has none
    finally:
        await forced_prompt.aclose()
        await forced_native.aclose()


def test_anthropic_tool_mode_prompt() -> None:
    provider = AnthropicProvider(ProviderConfig(name="anthropic", tool_mode="prompt"))
    assert provider.capabilities.native_tools is False

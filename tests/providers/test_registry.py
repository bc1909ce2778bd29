"""ProviderFactoryRegistry: built-ins, aliases, entry-point plugins, create_provider."""

from __future__ import annotations

import logging
import socket
from importlib.metadata import EntryPoint

import pytest

from clawseed_edge.api import ChatResponse, ConfigInvalid, ProviderCapabilities
from clawseed_edge.api import plugins as registry_module  # entry points are read there
from clawseed_edge.providers import (
    ENTRY_POINT_GROUP,
    OllamaProvider,
    OpenAICompatProvider,
    ProviderConfig,
    ProviderFactoryRegistry,
    ReliableProvider,
    create_provider,
    default_registry,
)
from clawseed_edge.testing.fake_servers import FakeOllama


class PluginProvider:
    def __init__(self, config: ProviderConfig) -> None:
        self.name = config.name
        self.model = config.model or "plugin-model"

    @property
    def capabilities(self) -> ProviderCapabilities:
        return ProviderCapabilities()

    async def chat(self, request: object) -> ChatResponse:
        return ChatResponse("from plugin")

    def stream(self, request: object):  # type: ignore[no-untyped-def]
        raise NotImplementedError

    async def aclose(self) -> None:
        pass


def plugin_factory(config: ProviderConfig) -> PluginProvider:
    return PluginProvider(config)


@pytest.mark.parametrize(
    ("name", "cls"),
    [
        ("ollama", OllamaProvider),
        ("local", OllamaProvider),
        ("openai", OpenAICompatProvider),
        ("groq", OpenAICompatProvider),
        ("llamacpp", OpenAICompatProvider),
        ("vllm", OpenAICompatProvider),
        ("lmstudio", OpenAICompatProvider),
        ("deepseek", OpenAICompatProvider),
        ("openrouter", OpenAICompatProvider),
        ("openai-compatible", OpenAICompatProvider),
    ],
)
async def test_built_in_names_and_aliases(name: str, cls: type) -> None:
    provider = default_registry().create(ProviderConfig(name=name))
    assert isinstance(provider, cls)
    assert provider.name == name
    await provider.aclose()


def test_claude_alias_builds_anthropic() -> None:
    from clawseed_edge.providers import AnthropicProvider

    registry = default_registry()
    assert registry.canonical("claude") == "anthropic"
    assert isinstance(registry.create(ProviderConfig(name="claude")), AnthropicProvider)


def test_unknown_name_lists_the_known_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry_module, "entry_points", lambda group: [])
    with pytest.raises(ConfigInvalid, match=r"unknown provider 'olama'.*ollama") as info:
        default_registry().get("olama")
    assert info.value.key == "provider.name"


def test_entry_point_plugins_load_only_for_unknown_names(monkeypatch: pytest.MonkeyPatch) -> None:
    looked_up: list[str] = []

    def fake_entry_points(group: str) -> list[EntryPoint]:
        looked_up.append(group)
        return [EntryPoint("echo", f"{__name__}:plugin_factory", group)]

    monkeypatch.setattr(registry_module, "entry_points", fake_entry_points)
    registry = default_registry()
    registry.create(ProviderConfig(name="openai"))
    assert looked_up == []  # built-ins never scan entry points
    provider = registry.create(ProviderConfig(name="echo"))
    assert isinstance(provider, PluginProvider)
    assert looked_up == [ENTRY_POINT_GROUP]
    registry.create(ProviderConfig(name="echo"))
    assert looked_up == [ENTRY_POINT_GROUP]  # cached after the first load


def test_a_broken_plugin_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        registry_module,
        "entry_points",
        lambda group: [EntryPoint("broken", "no_such_module_xyz:factory", group)],
    )
    with pytest.raises(ConfigInvalid, match=r"plugin 'broken'.*failed to load"):
        default_registry().get("broken")


def test_an_application_builds_a_minimal_registry() -> None:
    registry = ProviderFactoryRegistry(load_entry_points=False)
    registry.register("mine", plugin_factory, aliases=("default",))
    assert registry.names() == ["default", "mine"]
    assert "default" in registry and "ollama" not in registry
    provider = create_provider(ProviderConfig(name="default", max_retries=0), registry)
    assert isinstance(provider, PluginProvider)
    with pytest.raises(ConfigInvalid):
        registry.get("ollama")


async def test_create_provider_wraps_fallbacks_and_retries() -> None:
    plain = create_provider(ProviderConfig(name="openai", max_retries=0))
    assert isinstance(plain, OpenAICompatProvider)
    chain = create_provider(
        ProviderConfig(name="ollama", fallbacks=[ProviderConfig(name="groq")], max_retries=1)
    )
    assert isinstance(chain, ReliableProvider)
    assert [p.name for p in chain.providers] == ["ollama", "groq"]
    assert chain.max_retries == 1
    await chain.aclose()
    await plain.aclose()


def test_public_names_are_complete() -> None:
    import clawseed_edge.providers as providers

    for name in providers.__all__:
        assert getattr(providers, name) is not None, name
    assert sorted(dir(providers)) == sorted(providers.__all__)
    with pytest.raises(AttributeError):
        providers.NoSuchProvider  # noqa: B018


async def test_probe_through_the_chain_learns_that_the_model_has_no_tools(
    ollama: FakeOllama,
) -> None:
    chain = create_provider(ProviderConfig(base_url=ollama.url, model="gemma3:1b"))
    assert chain.capabilities.native_tools is True
    caps = await chain.probe()  # type: ignore[attr-defined]
    assert caps.native_tools is False
    assert chain.capabilities.native_tools is False
    await chain.aclose()


async def test_probe_of_a_down_server_is_logged_not_raised(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # At INFO: the first request reports the same error (agent -m said it twice).
    caplog.set_level(logging.INFO, logger="clawseed_edge.providers.reliable")
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    chain = create_provider(ProviderConfig(base_url=url, model="qwen2.5:3b"))
    caps = await chain.probe()  # type: ignore[attr-defined]
    assert caps.native_tools is True  # still the optimistic default
    assert "is `ollama serve` running?" in caplog.text
    await chain.aclose()

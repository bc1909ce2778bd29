"""Provider factories by name, aliases, plugins, and :func:`create_provider`.

A factory is any callable ``(ProviderConfig) -> Provider``, or an object with a ``settings``
msgspec Struct and ``create(config, settings) -> Provider``: such a provider brings its own
settings table, ``[provider.settings]``, validated by that Struct (errors name the key,
``provider.settings.region``), as a peripheral plugin validates its ``[[peripherals]]`` table.
Built-ins: ``ollama``, ``anthropic``, ``openai``, ``demo`` with aliases (``local`` -> ollama,
``claude`` -> anthropic, ``openai-compatible``/``llamacpp``/``vllm``/``lmstudio``/``groq``/
``deepseek``/``openrouter``/``gemini`` -> openai).

:class:`ProviderFactoryRegistry` is the one plugin registry
(:class:`~clawseed_edge.api.plugins.PluginRegistry`) for the kind ``providers``: third-party
packages add factories through the entry-point group ``clawseed_edge.providers``
(``name = "package.module:factory"``), read only when a name is not registered, so a plain
start never scans them; a plugin may not shadow a built-in (docs/plugins.md).

Built-in factories import their SDK inside the call: building an Ollama provider never imports
``anthropic``. An application that wants fewer choices builds its own registry::

    registry = ProviderFactoryRegistry(load_entry_points=False)
    registry.register("ollama", ollama_factory)
    provider = create_provider(config, registry)
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec

from clawseed_edge.api.errors import ConfigInvalid
from clawseed_edge.api.plugins import PLUGIN_GROUPS, PluginRegistry, describe_settings_error
from clawseed_edge.api.protocols import Provider

from .config import ProviderConfig

__all__ = [
    "ENTRY_POINT_GROUP",
    "ProviderFactory",
    "ProviderFactoryRegistry",
    "anthropic_factory",
    "create_provider",
    "default_registry",
    "ollama_factory",
    "openai_factory",
]

ENTRY_POINT_GROUP = PLUGIN_GROUPS["providers"]

#: A plain factory; a factory object with ``settings`` and ``create(config, settings)`` is the
#: other accepted shape (see the module docstring).
ProviderFactory = Callable[[ProviderConfig], Provider]


def ollama_factory(config: ProviderConfig) -> Provider:
    """An :class:`~clawseed_edge.providers.ollama.OllamaProvider` (loads httpx at its first request)."""
    from .ollama import OllamaProvider

    return OllamaProvider(config)


def anthropic_factory(config: ProviderConfig) -> Provider:
    """An :class:`~clawseed_edge.providers.anthropic.AnthropicProvider` (imports the SDK)."""
    from .anthropic import AnthropicProvider

    return AnthropicProvider(config)


def openai_factory(config: ProviderConfig) -> Provider:
    """An :class:`~clawseed_edge.providers.openai_compat.OpenAICompatProvider` (httpx only)."""
    from .openai_compat import OpenAICompatProvider

    return OpenAICompatProvider(config)


def demo_factory(config: ProviderConfig) -> Provider:
    """The offline rule-based :class:`~clawseed_edge.providers.demo.DemoProvider` (no network)."""
    from .demo import DemoProvider

    return DemoProvider(model=config.model or "demo-rules")


class ProviderFactoryRegistry(PluginRegistry[Any]):
    """Names (and aliases) -> provider factories, with lazy entry-point plugins.

    Args:
        load_entry_points: Look up unknown names in the ``clawseed_edge.providers`` group.
    """

    def __init__(self, *, load_entry_points: bool = True) -> None:
        super().__init__(
            "providers", noun="provider", load_entry_points=load_entry_points, key="provider.name"
        )

    def create(self, config: ProviderConfig) -> Provider:
        """Build one provider (no fallbacks, retries or routes) from ``config``.

        Raises:
            ConfigInvalid: An unknown name, or a ``[provider.settings]`` table the provider
                does not take or whose keys its Struct rejects (the key names the field).
        """
        factory = self.get(config.name)
        settings_type = getattr(factory, "settings", None)
        if settings_type is None:
            if config.settings:
                raise ConfigInvalid(
                    f"provider {config.name!r} takes no [provider.settings] table; its keys "
                    "go in [provider] itself (see docs/config.md)",
                    key="provider.settings",
                )
            provider: Provider = factory(config)
            return provider
        try:
            settings = msgspec.convert(config.settings, settings_type)
        except msgspec.ValidationError as exc:
            message, key = describe_settings_error(str(exc))
            raise ConfigInvalid(
                f"provider {config.name!r}: {message}",
                key=f"provider.settings.{key}" if key else "provider.settings",
            ) from exc
        built: Provider = factory.create(config, settings)
        return built


def default_registry() -> ProviderFactoryRegistry:
    """A registry with the built-in providers and their aliases (plugins load on demand)."""
    registry = ProviderFactoryRegistry()
    registry.register("ollama", ollama_factory, aliases=("local",))
    registry.register("anthropic", anthropic_factory, aliases=("claude",))
    registry.register("demo", demo_factory)
    registry.register(
        "openai",
        openai_factory,
        aliases=(
            "openai-compatible",
            "llamacpp",
            "vllm",
            "lmstudio",
            "groq",
            "deepseek",
            "openrouter",
            "gemini",
        ),
    )
    return registry


#: How a retrying chain waits between attempts (``asyncio.sleep``; tests inject a fake).
_Sleep = Callable[[float], Awaitable[object]]


def _chain(
    config: ProviderConfig, registry: ProviderFactoryRegistry, sleep: _Sleep = asyncio.sleep
) -> Provider:
    primary = registry.create(config)
    if not config.fallbacks and config.max_retries == 0:
        return primary
    from .reliable import ReliableProvider

    chain = [primary] + [registry.create(fb) for fb in config.fallbacks]
    return ReliableProvider(chain, max_retries=config.max_retries, sleep=sleep)


def create_provider(
    config: ProviderConfig,
    registry: ProviderFactoryRegistry | None = None,
    *,
    sleep: _Sleep = asyncio.sleep,
) -> Provider:
    """Build the configured provider: the primary, wrapped for fallbacks/retries and routes.

    With ``fallbacks`` or ``max_retries > 0`` the chain is a :class:`ReliableProvider`; with
    ``routes`` the result is a :class:`RouterProvider` over it. A route that names only a
    ``model`` gets a provider built from this config with that model (and the same fallbacks).
    Fallbacks' own ``fallbacks``/``routes`` are ignored.

    Args:
        config: The ``[provider]`` table.
        registry: Factories by provider name (default: built-ins and plugins).
        sleep: How retrying chains wait between attempts (tests pass a fake clock's sleep).

    Raises:
        ConfigInvalid: an unknown provider name.
    """
    registry = registry or default_registry()
    default = _chain(config, registry, sleep)
    if not config.routes:
        return default
    from .router import Route, RouterProvider

    routes = []
    for rule in config.routes:
        if rule.provider is not None:
            target = create_provider(
                msgspec.structs.replace(rule.provider, routes=[]), registry, sleep=sleep
            )
        else:
            target = _chain(
                msgspec.structs.replace(config, model=rule.model, routes=[]), registry, sleep
            )
        routes.append(
            Route(
                provider=target, hint=rule.hint, keywords=tuple(rule.keywords), images=rule.images
            )
        )
    return RouterProvider(default, routes)

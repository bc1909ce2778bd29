"""Provider factories by name, aliases, plugins, and :func:`create_provider`.

A factory is any callable ``(ProviderConfig) -> Provider``. Built-ins: ``ollama``,
``anthropic``, ``openai`` with aliases (``local`` -> ollama, ``claude`` -> anthropic,
``openai-compatible``/``llamacpp``/``vllm``/``lmstudio``/``groq``/``deepseek``/``openrouter``/
``gemini`` -> openai). Third-party packages add factories through the entry-point group
``clawseed_edge.providers`` (``name = "package.module:factory"``); entry points are read only
when a name is not registered, so a plain start never scans them.

Built-in factories import their SDK inside the call: building an Ollama provider never imports
``anthropic``. An application that wants fewer choices builds its own registry::

    registry = ProviderFactoryRegistry()
    registry.register("ollama", ollama_factory)
    provider = create_provider(config, registry)
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

import msgspec

from clawseed_edge.api.errors import ConfigInvalid
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

ENTRY_POINT_GROUP = "clawseed_edge.providers"


def entry_points(group: str) -> Any:
    """``importlib.metadata.entry_points``, imported only when an unknown name is looked up
    (the module and its email/zipfile imports cost about 2 MB of an idle service)."""
    from importlib.metadata import entry_points as installed

    return installed(group=group)


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


class ProviderFactoryRegistry:
    """Names (and aliases) -> provider factories, with lazy entry-point plugins.

    Args:
        load_entry_points: Look up unknown names in the ``clawseed_edge.providers`` group.
    """

    def __init__(self, *, load_entry_points: bool = True) -> None:
        self._factories: dict[str, ProviderFactory] = {}
        self._aliases: dict[str, str] = {}
        self._load_entry_points = load_entry_points

    def register(self, name: str, factory: ProviderFactory, *, aliases: Iterable[str] = ()) -> None:
        """Register ``factory`` under ``name`` (and ``aliases``); replaces an earlier one."""
        self._factories[name] = factory
        for alias in aliases:
            self._aliases[alias] = name

    def canonical(self, name: str) -> str:
        """The registered name an alias stands for (the name itself if not an alias)."""
        return self._aliases.get(name, name)

    def names(self) -> list[str]:
        """Registered names and aliases, sorted (entry points not yet loaded are not listed)."""
        return sorted({*self._factories, *self._aliases})

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.canonical(name) in self._factories

    def get(self, name: str) -> ProviderFactory:
        """The factory for ``name``, loading it from an entry point if not registered.

        Raises:
            ConfigInvalid: no provider of that name (the message lists the known ones).
        """
        key = self.canonical(name)
        factory = self._factories.get(key)
        if factory is None and self._load_entry_points:
            factory = self._from_entry_point(key)
        if factory is None:
            raise ConfigInvalid(
                f"unknown provider {name!r}: use one of {', '.join(self.names())} or install "
                f"a plugin that registers it in the entry-point group {ENTRY_POINT_GROUP!r}",
                key="provider.name",
            )
        return factory

    def _from_entry_point(self, name: str) -> ProviderFactory | None:
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            if ep.name == name:
                try:
                    factory = ep.load()
                except Exception as exc:
                    raise ConfigInvalid(
                        f"provider plugin {name!r} ({ep.value}) failed to load: {exc}",
                        key="provider.name",
                    ) from exc
                self._factories[name] = factory
                return factory  # type: ignore[no-any-return]
        return None

    def create(self, config: ProviderConfig) -> Provider:
        """Build one provider (no fallbacks, retries or routes) from ``config``."""
        return self.get(config.name)(config)


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

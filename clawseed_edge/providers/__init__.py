"""Model providers: Ollama, Anthropic, OpenAI-compatible; reliability and routing. Depends on api only.

Start here::

    from clawseed_edge.providers import ProviderConfig, create_provider

    provider = create_provider(ProviderConfig(name="ollama", model="qwen2.5:3b"))
    await provider.probe()          # if it has one: learns whether the model can call tools

Importing this package is cheap: the provider classes (and their SDKs, and httpx) are imported
only when first used, so a process that runs Ollama never loads ``anthropic``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from clawseed_edge.api.lazy import lazy_face as _lazy_face

from .config import PROVIDER_DEFAULTS, ProviderConfig, RouteConfig

if TYPE_CHECKING:
    from .anthropic import AnthropicProvider
    from .ollama import OllamaProvider
    from .openai_compat import OpenAICompatProvider
    from .registry import (
        ENTRY_POINT_GROUP,
        ProviderFactory,
        ProviderFactoryRegistry,
        create_provider,
        default_registry,
    )
    from .reliable import ReliableProvider
    from .router import Route, RouterProvider

__all__ = [
    "ENTRY_POINT_GROUP",
    "PROVIDER_DEFAULTS",
    "AnthropicProvider",
    "OllamaProvider",
    "OpenAICompatProvider",
    "ProviderConfig",
    "ProviderFactory",
    "ProviderFactoryRegistry",
    "ReliableProvider",
    "Route",
    "RouteConfig",
    "RouterProvider",
    "create_provider",
    "default_registry",
]

# The registry (and the api's protocols it names) only when a provider is made: loading a
# config needs ProviderConfig alone.
_LAZY = {
    "ENTRY_POINT_GROUP": ".registry",
    "ProviderFactory": ".registry",
    "ProviderFactoryRegistry": ".registry",
    "create_provider": ".registry",
    "default_registry": ".registry",
    "AnthropicProvider": ".anthropic",
    "OllamaProvider": ".ollama",
    "OpenAICompatProvider": ".openai_compat",
    "ReliableProvider": ".reliable",
    "Route": ".router",
    "RouterProvider": ".router",
}


__getattr__, __dir__ = _lazy_face(__name__, _LAZY, __all__)

"""The plugin registry of every kind, each with its built-ins: what ``plugins list`` shows.

Each kind keeps its own registry class where its objects are used (providers, peripherals,
sensor drivers, tools, hooks); this module only gathers them, in the order of
``clawseed_edge.api.plugins.PLUGIN_GROUPS``. The built-in channels (the gateway, Telegram, MQTT) are
registered by import path (the channels layer sits above this one; nothing is imported here).
"""

from __future__ import annotations

from typing import Any

from clawseed_edge.api.plugins import PluginRegistry

__all__ = ["channel_registry", "default_registries"]


def default_registries() -> dict[str, PluginRegistry[Any]]:
    """``kind -> registry`` with the built-ins registered (plugins load on demand)."""
    from clawseed_edge.agent.hooks import HookFactoryRegistry
    from clawseed_edge.peripherals.registry import default_registry as peripherals
    from clawseed_edge.peripherals.sensors.registry import default_driver_registry
    from clawseed_edge.providers.registry import default_registry as providers

    from .tool_table import default_tool_registry

    return {
        "providers": providers(),
        "peripherals": peripherals(),
        "sensors": default_driver_registry(),
        "tools": default_tool_registry(),
        "channels": channel_registry(),
        "hooks": HookFactoryRegistry(),
    }


def channel_registry() -> PluginRegistry[Any]:
    """The channel factories ``(settings, host) -> channel``: the built-ins by import path,
    plugins by entry point (``clawseed_edge.channels``)."""
    registry: PluginRegistry[Any] = PluginRegistry("channels", noun="channel")
    # Each a factory ``(settings, host) -> channel``, the signature a plugin channel has too.
    registry.register("gateway", "clawseed_edge.channels.gateway.channel:gateway_channel")
    registry.register("telegram", "clawseed_edge.channels.telegram.factory:telegram_channel")
    # Imported when named, not here: the mqtt extra may not be installed.
    registry.register("mqtt", "clawseed_edge.channels.mqtt.channel:mqtt_channel")
    return registry

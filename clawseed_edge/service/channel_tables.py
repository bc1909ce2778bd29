"""Which channels the service starts, in order, each with its settings table."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from clawseed_edge.api import ConfigInvalid

if TYPE_CHECKING:
    from clawseed_edge.config.file import LoadedConfig

__all__ = ["channel_tables"]


def channel_tables(loaded: LoadedConfig, gateway: Any) -> list[tuple[str, Any]]:
    """The configured channels in start order, each with its settings table: the gateway
    (``gateway``: ``[gateway]`` with the command line's overrides), Telegram, MQTT, then every
    ``[channels.<name>]`` of a plugin (unless ``enabled = false``).

    Raises:
        ConfigInvalid: A ``[channels.<name>]`` table names a built-in configured elsewhere.
    """
    config = loaded.config
    tables: list[tuple[str, Any]] = []
    if gateway.enabled:
        tables.append(("gateway", gateway))
    if config.channels.telegram.enabled:
        tables.append(("telegram", config.channels.telegram))
    if config.mqtt.enabled:
        tables.append(("mqtt", config.mqtt))
    for name, table in config.channels.plugins.items():
        if name in ("gateway", "mqtt"):
            raise ConfigInvalid(
                f"[channels.{name}] is not a plugin channel: the {name} channel is set in "
                f"[{name}]; move the keys there",
                file=loaded.source,
                key=f"channels.{name}",
            )
        if table.get("enabled", True) is not False:
            tables.append((name, table))
    return tables

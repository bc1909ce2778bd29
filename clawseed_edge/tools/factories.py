"""Tool factories by name: the one plugin registry for the kind ``tools``.

A tool factory turns a :class:`ToolSetup` (the memory, the workspace, the credential scrubber
and the loaded config) into one or more tools. It has one of two shapes, as a provider factory
does:

* a callable ``(setup) -> Tool | Sequence[Tool]``;
* an object with a ``settings`` msgspec Struct and ``create(setup, settings) -> Tool |
  Sequence[Tool]``: it brings its own settings table, validated by that Struct (errors name the
  key, ``tools.plugins[0].city``).

The built-in tools register here under their tool names, the same way a plugin does (the
config layer's :func:`~clawseed_edge.config.tool_table.default_tool_registry`); third-party
packages add factories through the entry-point group ``clawseed_edge.tools``
(``weather = "my_package.weather:factory"``) and a config names them in ``[[tools.plugins]]``.
Entry points are read only for a name that is not registered (docs/plugins.md).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec

from clawseed_edge.api import ConfigInvalid, Memory, Tool
from clawseed_edge.api.plugins import PLUGIN_GROUPS, PluginRegistry, describe_settings_error

__all__ = ["ENTRY_POINT_GROUP", "ToolFactoryRegistry", "ToolSetup"]

ENTRY_POINT_GROUP = PLUGIN_GROUPS["tools"]

#: The most tools one factory may add (a plugin returning a runaway list is a bug, said early).
MAX_TOOLS_PER_FACTORY = 64


class ToolSetup(msgspec.Struct, frozen=True):
    """What a tool factory may build its tools from.

    Attributes:
        memory: The agent's memory store.
        workspace: The directory the file and shell tools work in.
        scrub: Removes configured secrets from text a tool returns (None: nothing to scrub).
        config: The loaded config (the built-ins read ``[tools]``; a plugin reads its own
            settings instead).
        resolver: The HTTP tools' DNS resolver (None: the system's).
    """

    memory: Memory
    workspace: Path
    scrub: Callable[[str], str] | None = None
    config: Any = None
    resolver: Any = None


class ToolFactoryRegistry(PluginRegistry[Any]):
    """Names -> tool factories, with lazy entry-point plugins (group ``clawseed_edge.tools``).

    Args:
        load_entry_points: Look names that are not registered up in the entry-point group.
    """

    def __init__(self, *, load_entry_points: bool = True) -> None:
        super().__init__(
            "tools", noun="tool factory", load_entry_points=load_entry_points, key="tools"
        )

    def build(
        self,
        name: str,
        setup: ToolSetup,
        table: Mapping[str, Any] | None = None,
        *,
        file: str | None = None,
        key: str | None = None,
    ) -> list[Tool]:
        """The tools of the factory named ``name``.

        Args:
            name: The factory's name.
            setup: What it builds from.
            table: Its settings table (its ``[[tools.plugins]]`` entry without ``name``).
            file, key: Named in errors.

        Raises:
            ConfigInvalid: An unknown name, settings its Struct rejects, a table given to a
                factory that takes none, or a factory that returns something else than tools.
        """
        factory = self.get(name, file=file, key=key)
        settings_type = getattr(factory, "settings", None)
        if settings_type is None:
            if table:
                raise ConfigInvalid(
                    f"tool factory {name!r} takes no settings; remove "
                    f"{', '.join(sorted(table))} from its table",
                    file=file,
                    key=key,
                )
            made = factory(setup)
        else:
            try:
                settings = msgspec.convert(dict(table or {}), settings_type)
            except msgspec.ValidationError as exc:
                message, field = describe_settings_error(str(exc))
                where = f"{key}.{field}" if key and field else (key or field or None)
                raise ConfigInvalid(
                    f"tool factory {name!r}: {message}", file=file, key=where
                ) from exc
            made = factory.create(setup, settings)
        tools = [made] if not isinstance(made, Sequence) else list(made)
        if len(tools) > MAX_TOOLS_PER_FACTORY or not all(isinstance(tool, Tool) for tool in tools):
            raise ConfigInvalid(
                f"tool factory {name!r} returned {type(made).__name__} instead of up to "
                f"{MAX_TOOLS_PER_FACTORY} Tool objects; its plugin is broken",
                file=file,
                key=key,
            )
        return tools

"""Every built-in tool in one table: its name, risk class, whether the config turns it on and
which key does, and how it is built.

The built-ins register in the one tool registry (:func:`default_tool_registry`, a
:class:`~clawseed_edge.tools.factories.ToolFactoryRegistry`) under their names, the same way a
plugin's tool factory does (simonw/llm's ``default_plugins``); a plugin may not shadow them.
:func:`all_tools` builds the ones that are on, then the ``[[tools.plugins]]`` the config names
(the assembler registers them); :func:`builtin_tools` describes the built-ins, on or off, for
``clawseed-edge tools list``. Hardware tools come from the peripherals and are not listed here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from clawseed_edge.api import ConfigInvalid, Memory, RiskClass, Tool
from clawseed_edge.api.plugins import load_object
from clawseed_edge.tools.factories import ToolFactoryRegistry, ToolSetup

from .paths import clawseed_home, resolve_in_home
from .schema import Config, HttpSettings

if TYPE_CHECKING:
    from clawseed_edge.tools.destinations import DestinationPolicy, Resolver

__all__ = ["BuiltinTool", "all_tools", "builtin_tools", "default_tool_registry"]

Scrub = Callable[[str], str]


class BuiltinTool(msgspec.Struct, frozen=True):
    """One built-in tool as ``tools list`` shows it.

    Attributes:
        name: The tool's name.
        risk: Its risk class.
        enabled: Whether the config turns it on.
        key: The config key that turns it on or off (None: always on).
        turn_on: What to write in the config to turn it on ("" when it cannot be off).
    """

    name: str
    risk: RiskClass
    enabled: bool
    key: str | None
    turn_on: str = ""


# (tool name, its class under clawseed_edge.tools, config key under [tools] that turns it on;
# None: always on). The order is the order of registration. A class is imported when its tool
# is built or listed: a process without the shell or the HTTP tools never loads them.
_TABLE: tuple[tuple[str, str, str | None], ...] = (
    ("memory_store", "memory_tools:MemoryStoreTool", None),
    ("memory_recall", "memory_tools:MemoryRecallTool", None),
    ("memory_forget", "memory_tools:MemoryForgetTool", None),
    ("file_read", "files:FileReadTool", "files"),
    ("file_write", "files:FileWriteTool", "files"),
    ("file_list", "files:FileListTool", "files"),
    ("shell", "shell:ShellTool", "shell"),
    ("system_info", "system_info:SystemInfoTool", "system_info"),
    ("http_request", "http_tools:HttpRequestTool", "http_request"),
    ("web_fetch", "http_tools:WebFetchTool", "web_fetch"),
)
_CLASSES = {name: path for name, path, _ in _TABLE}


def _tool_class(name: str) -> Any:
    """The class of the built-in tool ``name``, imported now."""
    return load_object(f"clawseed_edge.tools.{_CLASSES[name]}")


def builtin_tools(config: Config) -> list[BuiltinTool]:
    """Every built-in tool, on or off, with its risk and the ``[tools]`` key that switches it."""
    return [
        BuiltinTool(
            name=str(_tool_class(name).name),
            risk=RiskClass(_tool_class(name).risk),
            enabled=_enabled(config, key),
            key=None if key is None else f"tools.{key}",
            turn_on=_turn_on(key),
        )
        for name, _, key in _TABLE
    ]


def _enabled(config: Config, key: str | None) -> bool:
    return key is None or bool(getattr(config.tools, key))


def _turn_on(key: str | None) -> str:
    if key is None:
        return ""
    text = f"set [tools] {key} = true"
    if key in ("http_request", "web_fetch"):
        text += " and list the hosts it may reach in [tools.http] allowed_domains"
    return text


def all_tools(
    config: Config,
    memory: Memory,
    *,
    workspace: Path | None = None,
    scrub: Scrub | None = None,
    resolver: Resolver | None = None,
    registry: ToolFactoryRegistry | None = None,
    source: str | None = None,
) -> list[Tool]:
    """The built-in tools the config turns on, in :data:`_TABLE`'s order, then the tools of
    each ``[[tools.plugins]]`` entry, in file order.

    Args:
        config: The loaded config (``[tools]``, its ``[tools.http]`` and ``[[tools.plugins]]``).
        memory: The store the memory tools use.
        workspace: The file and shell tools' directory (default: ``[agent] workspace_dir``
            under ``$CLAWSEED_HOME``).
        scrub: Credential scrubber for tool output (file, shell and HTTP tools).
        resolver: The HTTP tools' DNS resolver (default: the system's; tests pass a fake).
        registry: Tool factories by name (default: :func:`default_tool_registry`).
        source: The config file, named in errors.

    Raises:
        ConfigInvalid: A ``[[tools.plugins]]`` entry without a name, naming a built-in, an
            unknown plugin, or settings the plugin rejects (names the file and the key).
    """
    if workspace is None:
        workspace = resolve_in_home(config.agent.workspace_dir, clawseed_home())
    registry = registry or default_tool_registry()
    setup = ToolSetup(memory, workspace, scrub, config, resolver)
    tools: list[Tool] = []
    for builtin, _, key in _TABLE:
        if _enabled(config, key):
            tools.extend(registry.build(builtin, setup, file=source))
    builtins = {builtin: key for builtin, _, key in _TABLE}
    for i, table in enumerate(config.tools.plugins):
        where = f"tools.plugins[{i}]"
        name = table.get("name")
        if not isinstance(name, str) or not name:
            raise ConfigInvalid(
                "each [[tools.plugins]] entry needs a name: the tool plugin's entry-point name",
                file=source,
                key=f"{where}.name",
            )
        if name in builtins:
            how = _turn_on(builtins[name]) or "it is always on"
            raise ConfigInvalid(
                f"{name!r} is a built-in tool, not a plugin: {how}",
                file=source,
                key=f"{where}.name",
            )
        options = {k: v for k, v in table.items() if k != "name"}
        tools.extend(registry.build(name, setup, options, file=source, key=where))
    return tools


def default_tool_registry() -> ToolFactoryRegistry:
    """The tool registry with every built-in tool registered (plugins load on demand)."""
    registry = ToolFactoryRegistry()
    for name, factory in _BUILTIN_FACTORIES.items():
        registry.register(name, factory)
    return registry


def _http_request(setup: ToolSetup) -> Tool:
    http = setup.config.tools.http
    return _tool_class("http_request")(  # type: ignore[no-any-return]
        _destinations(http, setup.resolver), methods=http.methods, **_limits(http, setup.scrub)
    )


def _web_fetch(setup: ToolSetup) -> Tool:
    http = setup.config.tools.http
    return _tool_class("web_fetch")(  # type: ignore[no-any-return]
        _destinations(http, setup.resolver), **_limits(http, setup.scrub)
    )


def _built(name: str, build: Callable[[Any, ToolSetup], Tool]) -> Callable[[ToolSetup], Tool]:
    """A factory that imports the tool's class when it first builds one."""
    return lambda setup: build(_tool_class(name), setup)


#: How each built-in is built from a :class:`ToolSetup` (registered under its tool name).
_BUILTIN_FACTORIES: dict[str, Callable[[ToolSetup], Tool]] = {
    "memory_store": _built("memory_store", lambda cls, s: cls(s.memory)),
    "memory_recall": _built("memory_recall", lambda cls, s: cls(s.memory)),
    "memory_forget": _built("memory_forget", lambda cls, s: cls(s.memory)),
    "file_read": _built("file_read", lambda cls, s: cls(s.workspace, scrub=s.scrub)),
    "file_write": _built("file_write", lambda cls, s: cls(s.workspace, scrub=s.scrub)),
    "file_list": _built("file_list", lambda cls, s: cls(s.workspace, scrub=s.scrub)),
    "shell": _built("shell", lambda cls, s: cls(s.workspace, scrub=s.scrub)),
    "system_info": _built("system_info", lambda cls, s: cls(disk_paths=_disks(s.workspace))),
    "http_request": _http_request,
    "web_fetch": _web_fetch,
}


def _disks(workspace: Path) -> Sequence[str]:
    """The root filesystem, and the workspace's when it is another one (an SD card vs a USB
    disk); a workspace that does not exist yet is left out."""
    try:
        if workspace.stat().st_dev != Path("/").stat().st_dev:
            return ("/", str(workspace))
    except OSError:
        pass
    return ("/",)


def _destinations(http: HttpSettings, resolver: Resolver | None) -> DestinationPolicy:
    from clawseed_edge.tools.destinations import DestinationPolicy

    return DestinationPolicy.of(http.allowed_domains, http.allowed_networks, resolver)


def _limits(http: HttpSettings, scrub: Scrub | None) -> dict[str, Any]:
    return {
        "timeout_s": http.timeout_s,
        "max_response_bytes": http.max_response_bytes,
        "max_redirects": http.max_redirects,
        "max_output_chars": http.max_output_chars,
        "scrub": scrub,
    }

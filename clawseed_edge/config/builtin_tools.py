"""Every built-in tool in one table: its name, risk class, whether the config turns it on and
which key does, and how it is built.

:func:`all_tools` builds the ones that are on (the assembler registers them);
:func:`builtin_tools` describes all of them, on or off, for ``clawseed-edge tools list``.
Hardware tools come from the peripherals and are not listed here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clawseed_edge.api import Memory, RiskClass, Tool
from clawseed_edge.tools.destinations import DestinationPolicy
from clawseed_edge.tools.files import FileListTool, FileReadTool, FileWriteTool
from clawseed_edge.tools.http_tools import HttpRequestTool, WebFetchTool
from clawseed_edge.tools.memory_tools import MemoryForgetTool, MemoryRecallTool, MemoryStoreTool
from clawseed_edge.tools.shell import ShellTool
from clawseed_edge.tools.system_info import SystemInfoTool

from .paths import clawseed_home, resolve_in_home
from .schema import Config, HttpSettings

if TYPE_CHECKING:
    from clawseed_edge.tools.destinations import Resolver

__all__ = ["BuiltinTool", "all_tools", "builtin_tools"]

Scrub = Callable[[str], str]


@dataclass(frozen=True, slots=True)
class BuiltinTool:
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


# (tool class, config key under [tools] that turns it on; None: always on). The order is the
# order of registration.
_TABLE: tuple[tuple[type[Tool], str | None], ...] = (
    (MemoryStoreTool, None),
    (MemoryRecallTool, None),
    (MemoryForgetTool, None),
    (FileReadTool, "files"),
    (FileWriteTool, "files"),
    (FileListTool, "files"),
    (ShellTool, "shell"),
    (SystemInfoTool, "system_info"),
    (HttpRequestTool, "http_request"),
    (WebFetchTool, "web_fetch"),
)


def builtin_tools(config: Config) -> list[BuiltinTool]:
    """Every built-in tool, on or off, with its risk and the ``[tools]`` key that switches it."""
    return [
        BuiltinTool(
            name=str(cls.name),
            risk=RiskClass(cls.risk),
            enabled=key is None or bool(getattr(config.tools, key)),
            key=None if key is None else f"tools.{key}",
            turn_on=_turn_on(key),
        )
        for cls, key in _TABLE
    ]


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
) -> list[Tool]:
    """The built-in tools the config turns on, in :data:`_TABLE`'s order.

    Args:
        config: The loaded config (``[tools]`` and its ``[tools.http]``).
        memory: The store the memory tools use.
        workspace: The file and shell tools' directory (default: ``[agent] workspace_dir``
            under ``$CLAWSEED_HOME``).
        scrub: Credential scrubber for tool output (file, shell and HTTP tools).
        resolver: The HTTP tools' DNS resolver (default: the system's; tests pass a fake).
    """
    if workspace is None:
        workspace = resolve_in_home(config.agent.workspace_dir, clawseed_home())
    on = {b.name for b in builtin_tools(config) if b.enabled}
    built: dict[str, Callable[[], Tool]] = {
        "memory_store": lambda: MemoryStoreTool(memory),
        "memory_recall": lambda: MemoryRecallTool(memory),
        "memory_forget": lambda: MemoryForgetTool(memory),
        "file_read": lambda: FileReadTool(workspace, scrub=scrub),
        "file_write": lambda: FileWriteTool(workspace, scrub=scrub),
        "file_list": lambda: FileListTool(workspace, scrub=scrub),
        "shell": lambda: ShellTool(workspace, scrub=scrub),
        "system_info": lambda: SystemInfoTool(disk_paths=_disks(workspace)),
        "http_request": lambda: HttpRequestTool(
            _destinations(config.tools.http, resolver),
            methods=config.tools.http.methods,
            **_limits(config.tools.http, scrub),
        ),
        "web_fetch": lambda: WebFetchTool(
            _destinations(config.tools.http, resolver), **_limits(config.tools.http, scrub)
        ),
    }
    return [built[str(cls.name)]() for cls, _ in _TABLE if cls.name in on]


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
    return DestinationPolicy.of(http.allowed_domains, http.allowed_networks, resolver)


def _limits(http: HttpSettings, scrub: Scrub | None) -> dict[str, Any]:
    return {
        "timeout_s": http.timeout_s,
        "max_response_bytes": http.max_response_bytes,
        "max_redirects": http.max_redirects,
        "max_output_chars": http.max_output_chars,
        "scrub": scrub,
    }

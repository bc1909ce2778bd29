"""The typed configuration: one msgspec Struct per TOML table.

A complete file, every key optional (the values shown are the defaults)::

    [agent]
    max_tool_iterations = 10
    max_history = 50
    tool_timeout_s = 30.0
    workspace_dir = "workspace"        # relative to $CLAWSEED_HOME

    [autonomy]
    level = "supervised"               # read_only | supervised | full
    max_actions_per_hour = 120
    approval_timeout_s = 120.0
    shell_allowlist = ["ls", "cat", "echo", "date", "uptime", "df", "free", "vcgencmd"]
    forbidden_paths = []               # added to the built-in list (/etc/shadow, ~/.ssh ...)

    [tools]
    allowed = ["*"]                    # glob patterns; deny wins
    denied = []

    [[hooks]]
    name = "my_hook"                   # a HookFactory registered by name
    options = {}

The sections of the other layers (``[provider]``, ``[memory]``, ``[hardware]``,
``[[devices]]``) are defined next to the code they configure and embedded here.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

__all__ = ["AgentSettings", "AutonomySettings", "HookSettings", "ToolsSettings"]

DEFAULT_SHELL_ALLOWLIST = ["ls", "cat", "echo", "date", "uptime", "df", "free", "vcgencmd"]


class AgentSettings(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """``[agent]``: the turn engine."""

    max_tool_iterations: int = 10
    max_history: int = 50
    tool_timeout_s: float = 30.0
    workspace_dir: str = "workspace"


class AutonomySettings(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """``[autonomy]``: the SecurityPolicy."""

    level: Literal["read_only", "supervised", "full"] = "supervised"
    max_actions_per_hour: int = 120
    approval_timeout_s: float = 120.0
    shell_allowlist: list[str] = msgspec.field(default_factory=lambda: list(DEFAULT_SHELL_ALLOWLIST))
    forbidden_paths: list[str] = msgspec.field(default_factory=list)


class ToolsSettings(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """``[tools]``: which tools the model may see (glob patterns, deny wins)."""

    allowed: list[str] = msgspec.field(default_factory=lambda: ["*"])
    denied: list[str] = msgspec.field(default_factory=list)


class HookSettings(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """``[[hooks]]``: a hook built by the factory registered under ``name``."""

    name: str
    options: dict[str, Any] = msgspec.field(default_factory=dict)

"""``[mcp]``: the MCP server on the gateway, and the external MCP servers whose tools the agent
gets (``[[mcp.servers]]``; their tools appear as ``<server>__<tool>``). docs/mcp.md."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Literal

import msgspec

__all__ = ["McpServerSettings", "McpSettings", "with_secret_env"]

_SERVER_NAME = r"[A-Za-z0-9-]{1,24}(?:_[A-Za-z0-9-]+)*"
_VARIABLE = r"[A-Za-z_][A-Za-z0-9_]{0,127}"


class McpServerSettings(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """``[[mcp.servers]]``: one MCP server whose tools join the agent's as ``<name>__<tool>``.

    Attributes:
        name: The server's name, the prefix of its tools (letters, digits, ``-``, single
            ``_``; at most 24 characters).
        command: Launch it over stdio: the program (give ``args`` and ``env`` too).
        args: The program's arguments.
        env: Environment variables for it (added to a minimal environment: PATH, HOME ...).
            Shown as ``***`` by ``config show`` and ``GET /api/config``; put credentials in
            ``env_from_secrets`` instead, so the config file holds none.
        env_from_secrets: Environment variables whose values are looked up at launch, by
            name, in the process environment and then ``$CLAWSEED_HOME/secrets``
            (``{ HASS_TOKEN = "HASS_TOKEN" }``; set one with ``clawseed-edge secrets set``).
        url: Or reach it by streamable HTTP at this ``http(s)://`` URL.
        token_env: The environment variable holding a bearer token for ``url``.
        tools: Which of its tools the agent gets (glob patterns on the server's tool names).
        denied: Which it does not; a name matching both is denied.
        risk: How the SecurityPolicy treats its tools: ``read``, ``act`` (``supervised``
            asks) or ``dangerous``.
        timeout_s: The longest one call may take; a longer one fails (the server is told to
            cancel it).
        max_result_chars: Longer results are cut to this many characters. A message from the
            server over max(1 MiB, 6 bytes per character of this) fails its call unread (the
            memory of the service stays bounded).
        connect_timeout_s: The longest a start (launch, handshake, tool list) may take.
        max_reconnects: Reconnects in a row (with backoff) after it dies before it is given up
            (its tools then fail with a reason until the service restarts).
    """

    name: str
    command: str | None = None
    args: list[str] = msgspec.field(default_factory=list)
    env: dict[str, str] = msgspec.field(default_factory=dict)
    env_from_secrets: dict[str, str] = msgspec.field(default_factory=dict)
    url: str | None = None
    token_env: str | None = None
    tools: list[str] = msgspec.field(default_factory=lambda: ["*"])
    denied: list[str] = msgspec.field(default_factory=list)
    risk: Literal["read", "act", "dangerous"] = "act"
    timeout_s: Annotated[float, msgspec.Meta(gt=0, le=3600)] = 30.0
    max_result_chars: Annotated[int, msgspec.Meta(ge=100, le=1_000_000)] = 16_000
    connect_timeout_s: Annotated[float, msgspec.Meta(gt=0, le=300)] = 20.0
    max_reconnects: Annotated[int, msgspec.Meta(ge=0, le=100)] = 5

    def __post_init__(self) -> None:
        if re.fullmatch(_SERVER_NAME, self.name) is None:
            raise ValueError(
                f"name: {self.name[:40]!r} is not a server name: use 1-24 letters, digits, '-' "
                "or single '_' (its tools are named <name>__<tool>)"
            )
        if (self.command is None) == (self.url is None):
            raise ValueError(
                f"server {self.name!r}: give either command (stdio) or url (streamable HTTP)"
            )
        if self.url is not None and not self.url.startswith(("http://", "https://")):
            raise ValueError(f"url: {self.url[:80]!r} must start with http:// or https://")
        for variable, secret in self.env_from_secrets.items():
            if re.fullmatch(_VARIABLE, variable) is None or re.fullmatch(_VARIABLE, secret) is None:
                raise ValueError(
                    f"env_from_secrets: {variable[:40]!r} = {secret[:40]!r} is not NAME = "
                    "SECRET_NAME; use letters, digits and _ (not starting with a digit)"
                )
            if self.command is None:
                raise ValueError(
                    f"env_from_secrets: server {self.name!r} has no command to give them to"
                )
        if self.token_env is not None and self.url is None:
            raise ValueError(f"token_env: server {self.name!r} has no url to send a token to")


class McpSettings(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """``[mcp]``: Model Context Protocol (our own wire: no extra is needed).

    Attributes:
        http: Serve MCP (streamable HTTP) on the gateway at ``/mcp``, with the paired tokens.
        servers: External MCP servers whose tools the agent gets.
        approvers: Paired clients (the name they paired with, or their id) whose answers to
            an approval question on ``/mcp`` approve their own calls. Every other ``/mcp``
            client's approvals go to a person on another channel (phone, Telegram).
    """

    http: bool = False
    approvers: list[str] = msgspec.field(default_factory=list)
    servers: list[McpServerSettings] = msgspec.field(default_factory=list)

    def __post_init__(self) -> None:
        names = [s.name for s in self.servers]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"servers: the name {twice[0]!r} is used twice; names must differ")


def with_secret_env(settings: McpServerSettings, secrets_path: Path) -> McpServerSettings:
    """``settings`` with ``env_from_secrets`` looked up and added to ``env`` (for the launch
    only: the result is never shown or written).

    Raises:
        ConfigInvalid: A named secret is in neither the environment nor the secrets file.
    """
    if not settings.env_from_secrets:
        return settings
    from clawseed_edge.api import ConfigInvalid

    from .secrets import lookup_secret

    env = dict(settings.env)
    for variable, secret in settings.env_from_secrets.items():
        value = lookup_secret(secret, secrets_path)
        if value is None:
            raise ConfigInvalid(
                f"[[mcp.servers]] {settings.name!r}: the secret {secret} (env_from_secrets."
                f"{variable}) is not set; run `clawseed-edge secrets set {secret}`",
                key="mcp.servers.env_from_secrets",
            )
        env[variable] = value
    return msgspec.structs.replace(settings, env=env)

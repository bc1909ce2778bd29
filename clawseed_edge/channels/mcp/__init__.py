"""The MCP server: the agent's hardware, sensor and enabled built-in tools for any MCP host.

``clawseed-edge mcp serve`` speaks the Model Context Protocol over stdio (what desktop hosts
launch). Every call goes through the SecurityPolicy as a model's call does
(:func:`~clawseed_edge.agent.tool_run.call_tool`): with no service running, through the
runtime it assembles itself (:class:`LocalBackend`); with the service running, through the
service's over its control socket (the command's bridge), so the hardware is never opened twice.

The SDK (``mcp``, the ``[mcp]`` extra, ~55 MB) is imported by :mod:`.server` only: importing
this package does not load it.
"""

from __future__ import annotations

from .backend import (
    Ask,
    ElicitingApprover,
    LocalBackend,
    ToolBackend,
    annotations_for,
    asking,
    current_asker,
)

__all__ = [
    "Ask",
    "ElicitingApprover",
    "LocalBackend",
    "ToolBackend",
    "annotations_for",
    "asking",
    "current_asker",
]

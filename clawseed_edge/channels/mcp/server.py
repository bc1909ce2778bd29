"""The MCP server's face: :func:`build_server`, :func:`serve_stdio` and :class:`McpHttp`.

Our own wire (:mod:`clawseed_edge.tools.mcp_wire`), no SDK: :mod:`.handlers` answers the
methods, :mod:`.stdio` and :mod:`.http` carry them, :mod:`.approval` asks the client in both
protocol eras. docs/mcp.md says what is implemented and what is not.
"""

from __future__ import annotations

from .backend import ToolBackend
from .handlers import McpServer
from .http import McpHttp
from .stdio import serve_stdio

__all__ = ["McpHttp", "McpServer", "build_server", "serve_stdio"]


def build_server(backend: ToolBackend, *, name: str = "clawseed-edge") -> McpServer:
    """An :class:`McpServer` whose methods go through ``backend``."""
    return McpServer(backend, name=name)

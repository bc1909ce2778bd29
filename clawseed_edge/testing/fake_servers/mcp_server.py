"""A small MCP server on the official SDK, for tests of the MCP client (``[[mcp.servers]]``).

Run it as ``python -m clawseed_edge.testing.fake_servers.mcp_server`` (stdio). Its tools:
``echo`` (says its text back), ``whoami`` (its process id: a restart shows), ``hang`` (never
answers), ``huge`` (a result of ``size`` characters), ``fail`` (raises). It writes one line to
stderr at start (the client logs a server's stderr). Needs the ``[mcp]`` extra.
"""

from __future__ import annotations

import asyncio
import os
import sys

from mcp.server import MCPServer

__all__ = ["build", "main"]


def build() -> MCPServer:
    server = MCPServer("fake-mcp")

    @server.tool()
    def echo(text: str) -> str:
        """Say the text back."""
        return f"echo: {text}"

    @server.tool()
    def whoami() -> str:
        """This server process's id."""
        return str(os.getpid())

    @server.tool()
    async def hang() -> str:
        """Never answers."""
        await asyncio.sleep(3600)
        return "too late"

    @server.tool()
    def huge(size: int = 1_000_000) -> str:
        """A result of ``size`` characters."""
        return "x" * size

    @server.tool()
    def fail() -> str:
        """Always raises."""
        raise RuntimeError("the fake tool failed on purpose")

    return server


def main() -> None:
    print(f"fake-mcp {os.getpid()} starting", file=sys.stderr, flush=True)
    build().run("stdio")


if __name__ == "__main__":
    main()

"""A small MCP server on the official SDK, for tests of the MCP client (``[[mcp.servers]]``).

Run it as ``python -m clawseed_edge.testing.fake_servers.mcp_server`` (stdio), or with
``--http PORT [--allowed-host HOST:PORT]`` as streamable HTTP on 127.0.0.1 (at ``/mcp``; the
SDK's DNS-rebinding check accepts only that Host header when one is given). Its tools:
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


def main(argv: list[str] | None = None) -> None:
    import argparse

    parser = argparse.ArgumentParser(description="a small MCP server for tests")
    parser.add_argument("--http", type=int, metavar="PORT", help="streamable HTTP on this port")
    parser.add_argument("--allowed-host", help="the only Host header accepted (HOST:PORT)")
    args = parser.parse_args(argv)
    print(f"fake-mcp {os.getpid()} starting", file=sys.stderr, flush=True)
    if args.http is None:
        build().run("stdio")
        return
    import uvicorn
    from mcp.server.transport_security import TransportSecuritySettings

    security = None
    if args.allowed_host:
        security = TransportSecuritySettings(allowed_hosts=[args.allowed_host])
    app = build().streamable_http_app(transport_security=security)
    uvicorn.run(app, host="127.0.0.1", port=args.http, log_level="warning")


if __name__ == "__main__":
    main()

"""``clawseed-edge mcp serve`` and ``mcp config``: this board's tools for any MCP host.

``mcp serve`` speaks the Model Context Protocol over stdio (what desktop hosts launch). When
the service runs, it bridges to it over the control socket, so every call goes through the
service's peripherals, policy, rate limits and approvals and the hardware is never opened
twice; otherwise it assembles its own runtime, as ``agent`` does. ``mcp config`` prints the
JSON a desktop host (Claude Desktop's ``claude_desktop_config.json``) needs to launch it.
Needs the ``[mcp]`` extra: ``pip install 'clawseed-edge[mcp]'``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .common import described, fail, open_runtime, run_async

__all__ = ["ControlBackend", "register"]

#: How long one bridged call may take (an approval on a phone waits up to its own timeout).
BRIDGE_CALL_TIMEOUT_S = 300.0


def register(sub: Any) -> None:
    mcp = sub.add_parser(
        "mcp",
        help="serve this board's tools to MCP hosts (Claude Desktop, IDE agents)",
        description=described(__doc__),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = mcp.add_subparsers(dest="mcp_action", metavar="ACTION", required=True)
    serve = actions.add_parser("serve", help="speak MCP over stdio")
    serve.add_argument(
        "--sim",
        action="store_true",
        help="run the configured devices on simulated pins (when no service is running)",
    )
    serve.add_argument("-v", "--verbose", action="count", default=0, help="more logging")
    serve.set_defaults(func=_serve)
    config = actions.add_parser("config", help="print the JSON a desktop host needs")
    config.add_argument("--sim", action="store_true", help="launch it with --sim")
    config.add_argument("--name", default="clawseed-edge", help="the server's name in the host")
    config.set_defaults(func=_config)


class ControlBackend:
    """The MCP server's tools and states from the running service, over its control socket."""

    def __init__(self, path: Path) -> None:
        self.path = path

    async def tools(self) -> list[dict[str, Any]]:
        from clawseed_edge.service import control_request

        return list((await control_request(self.path, "mcp_tools"))["tools"])

    async def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        from clawseed_edge.service import ControlError, control_request

        try:
            answer = await control_request(
                self.path,
                "mcp_call",
                timeout_s=BRIDGE_CALL_TIMEOUT_S,
                name=name,
                arguments=arguments,
            )
        except ControlError as exc:
            return {"ok": False, "output": "", "error": str(exc)}
        return {
            "ok": bool(answer.get("call_ok")),
            "output": str(answer.get("output", "")),
            "error": str(answer.get("error", "")),
        }

    async def states(self) -> dict[str, Any]:
        from clawseed_edge.service import control_request

        answer = await control_request(self.path, "mcp_states")
        return {"devices": answer["devices"], "readings": answer["readings"]}

    async def pinouts(self) -> list[dict[str, Any]]:
        from clawseed_edge.service import control_request

        return list((await control_request(self.path, "mcp_pinouts"))["pinouts"])

    def watch(self, listener: Callable[[list[str]], None]) -> Callable[[], None]:
        """Not over the control socket (request and answer only): no change notifications;
        reads are fresh."""
        return lambda: None


def _sdk_missing() -> str | None:
    import importlib.util

    if importlib.util.find_spec("mcp") is None:
        return "MCP needs the SDK: pip install 'clawseed-edge[mcp]'"
    return None


def _serve(args: argparse.Namespace) -> int:
    missing = _sdk_missing()
    if missing:
        return fail(missing)

    async def main() -> int:
        from clawseed_edge.channels.approvals import ApprovalBroker
        from clawseed_edge.channels.mcp import ElicitingApprover, LocalBackend
        from clawseed_edge.channels.mcp.server import serve_stdio
        from clawseed_edge.config.paths import clawseed_home
        from clawseed_edge.service import ControlError, control_request, find_control_socket

        socket = find_control_socket(clawseed_home())
        try:
            await control_request(socket, "ping", timeout_s=1.0)
        except ControlError:
            pass  # no service: assemble our own
        else:
            print(f"mcp: bridging to the running service ({socket})", file=sys.stderr)
            await serve_stdio(ControlBackend(socket))
            return 0
        # No phone can reach this process: a client that cannot elicit is refused by the
        # broker with a reason ("no paired client is connected"), never approved.
        approver = ElicitingApprover(ApprovalBroker())
        runtime = await open_runtime(args, approver=approver)
        async with runtime:
            header = runtime.loaded.config.hardware.board
            backend = LocalBackend(runtime.agent, list(runtime.peripherals), header_board=header)
            await serve_stdio(backend)
        return 0

    return run_async(args, main)


def _config(args: argparse.Namespace) -> int:
    command = shutil.which("clawseed-edge") or "clawseed-edge"
    launch = ["mcp", "serve"]
    if getattr(args, "config", None):
        launch = ["--config", str(Path(args.config).resolve()), *launch]
    if args.sim:
        launch.append("--sim")
    snippet = {"mcpServers": {args.name: {"command": command, "args": launch}}}
    print(json.dumps(snippet, indent=2))
    return 0

"""``clawseed-edge mcp serve`` and ``mcp config``: this board's tools for any MCP host.

``mcp serve`` speaks the Model Context Protocol over stdio (what desktop hosts launch). When
the service runs, it bridges to it over the control socket, so every call goes through the
service's peripherals, policy, rate limits and approvals and the hardware is never opened
twice; otherwise it assembles its own runtime, as ``agent`` does. ``mcp config`` prints the
JSON a desktop host (Claude Desktop's ``claude_desktop_config.json``) needs to launch it.
It speaks MCP's wire itself (docs/mcp.md): no extra is needed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .common import described, open_runtime, run_async

__all__ = ["ControlBackend", "register"]

log = logging.getLogger(__name__)

#: How long one bridged call may take (an approval on a phone waits up to its own timeout).
BRIDGE_CALL_TIMEOUT_S = 300.0
#: Approvals one bridged call may ask the host for (one per call; more is a confused service).
MAX_ASKS_PER_CALL = 4
#: URIs one state-change frame may name, and the reconnects of the state watch before the
#: bridge stops sending change notifications (backoff 1, 2, 4 ... s).
MAX_CHANGED_URIS = 64
MAX_WATCH_RECONNECTS = 5
MAX_URI_CHARS = 200
#: Why an approval device is refused when `mcp serve` runs on its own and the host cannot be
#: asked: there is no gateway here, so no phone to point to.
STANDALONE_REFUSAL = (
    "this device needs a person's approval, and this MCP host cannot ask for it (it does not "
    "support elicitation); use a host that does, or start the service (`clawseed-edge run`) "
    "so that `mcp serve` bridges to it and its approvers"
)


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
    """The MCP server's tools and states from the running service, over its control socket.

    A call whose host can elicit is sent with ``ask``: an approval the service needs comes back
    on the call's connection and is asked of the host here. Subscriptions are served by a
    watch of the service's state feeds (``mcp_watch``), one connection while any is held.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._watch: asyncio.Task[None] | None = None
        self._watching_now = asyncio.Event()

    async def tools(self) -> list[dict[str, Any]]:
        from clawseed_edge.service import control_request

        return list((await control_request(self.path, "mcp_tools"))["tools"])

    async def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        from clawseed_edge.channels.mcp import current_asker
        from clawseed_edge.service import ControlError

        ask = current_asker()
        try:
            async with asyncio.timeout(BRIDGE_CALL_TIMEOUT_S):
                answer = await self._call(name, arguments, ask)
        except TimeoutError:
            return {
                "ok": False,
                "output": "",
                "error": f"the service did not answer {name} within {BRIDGE_CALL_TIMEOUT_S:g} s",
            }
        except ControlError as exc:
            return {"ok": False, "output": "", "error": str(exc)}
        return {
            "ok": bool(answer.get("call_ok")),
            "output": str(answer.get("output", "")),
            "error": str(answer.get("error", "")),
        }

    async def _call(self, name: str, arguments: dict[str, Any], ask: Any) -> dict[str, Any]:
        """The ``mcp_call`` exchange: the service's questions to ``ask``, then its answer."""
        from clawseed_edge.service import ControlError, control_stream, stream_answer

        request: dict[str, Any] = {"name": name, "arguments": arguments, "ask": ask is not None}
        async with control_stream(self.path, "mcp_call", **request) as stream:
            for _ in range(MAX_ASKS_PER_CALL + 1):
                frame = await stream.receive()
                if "ok" in frame:
                    return stream_answer(frame)
                if "ask" in frame and ask is not None:
                    await stream.send({"answer": await ask(str(frame["ask"])[:1000])})
                else:
                    raise ControlError(f"the service sent an unexpected frame during {name}")
        raise ControlError(f"the service asked more than {MAX_ASKS_PER_CALL} times during {name}")

    async def states(self) -> dict[str, Any]:
        from clawseed_edge.service import control_request

        answer = await control_request(self.path, "mcp_states")
        return {"devices": answer["devices"], "readings": answer["readings"]}

    async def pinouts(self) -> list[dict[str, Any]]:
        from clawseed_edge.service import ControlError, control_request

        try:
            return list((await control_request(self.path, "mcp_pinouts"))["pinouts"])
        except ControlError as exc:  # a service of an older version: the rest is served
            log.warning("mcp: the service sent no board pinouts (%s)", exc)
            return []

    def watch(self, listener: Callable[[list[str]], None]) -> Callable[[], None]:
        """Call ``listener(uris)`` on the service's state changes (its ``mcp_watch`` op), in a
        task of its own; the watch reconnects with backoff at most
        :data:`MAX_WATCH_RECONNECTS` times in a row, then stops (reads stay fresh)."""
        task = asyncio.get_running_loop().create_task(self._watching(listener), name="mcp-watch")
        self._watch = task

        def stop() -> None:
            task.cancel()

        return stop

    async def watch_ready(self) -> None:
        """Wait until the service watches for us (its first frame came). Cancel-safe."""
        await self._watching_now.wait()

    async def _watching(self, listener: Callable[[list[str]], None]) -> None:
        from clawseed_edge.service import ControlError, control_stream

        failures = 0
        while True:
            try:
                async with control_stream(self.path, "mcp_watch") as stream:
                    while True:
                        frame = await stream.receive()
                        if "ok" in frame:
                            raise ControlError(str(frame.get("error") or "the watch ended"))
                        failures = 0  # a frame arrived: the watch works
                        self._watching_now.set()
                        changed = frame.get("changed")
                        if isinstance(changed, list):
                            uris = [str(u)[:MAX_URI_CHARS] for u in changed[:MAX_CHANGED_URIS]]
                            listener(uris)
            except ControlError as exc:
                self._watching_now.clear()
                failures += 1
                if failures > MAX_WATCH_RECONNECTS:
                    log.warning("mcp: the service's state watch failed (%s); no more updates", exc)
                    return
                with contextlib.suppress(Exception):
                    await asyncio.sleep(min(2.0 ** (failures - 1), 30.0))


def _serve(args: argparse.Namespace) -> int:
    async def main() -> int:
        from clawseed_edge.agent.approval import StaticApprover
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
        # No phone can reach this process (no service, no gateway): a client that cannot
        # elicit is refused with what the person at the host can do, never approved.
        approver = ElicitingApprover(StaticApprover(False, STANDALONE_REFUSAL))
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

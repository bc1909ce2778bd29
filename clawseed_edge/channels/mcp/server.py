"""The MCP protocol side of the server, on the official SDK's low-level ``Server``.

Tools come from a :class:`~.backend.ToolBackend` with their JSON schemas and annotations from
their risk class; resources are the devices' states (``device://<name>``, and
``clawseed://devices``), the sensors' readings (``sensor://<name>``, ``clawseed://sensors``)
and each board's pinout as configured (``board://<peripheral>``, or ``board://<board id>`` for
the Pi header when no device is wired to it); prompts: ``what_is_connected`` and ``diagnose_wiring``.

Approvals by elicitation need a back-channel for server-initiated requests: a handshake-era
session has it (stdio hosts today), so the client is asked when it declared elicitation;
otherwise the request goes to the approvals broker (:class:`~.eliciting.ElicitingApprover`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import Any

import mcp_types as types
from mcp.server.lowlevel.server import Server

from .backend import MAX_RESULT_CHARS, ToolBackend, annotations_for
from .eliciting import asking

__all__ = ["McpHttp", "build_server", "serve_stdio"]

log = logging.getLogger(__name__)

#: Bounds of what one call sends: its arguments (as JSON) and a URI.
MAX_ARGUMENT_CHARS = 16_000
MAX_URI_CHARS = 200
#: How long an elicitation waits for the person at the MCP host.
ELICIT_TIMEOUT_S = 120.0

_APPROVE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"approve": {"type": "boolean", "title": "Run it", "default": False}},
    "required": ["approve"],
}

_PROMPTS = {
    "what_is_connected": (
        "List what is wired to this board and the state of each device and sensor.",
        "Read the clawseed://devices and clawseed://sensors resources (or call the read-only "
        "tools) and tell me, in a short table, every device and sensor on this board: its "
        "name, kind, pin and current state or reading. Do not switch anything.",
    ),
    "diagnose_wiring": (
        "Check a device's wiring step by step, without switching anything unasked.",
        "Help me diagnose the wiring of the device {device}. First read its state and the "
        "board's health with read-only tools; say what you expect to see and what you see. "
        "Propose one switch at a time and wait for my approval before each.",
    ),
}


#: Resource subscriptions one client session may hold, and notifications queued per session.
MAX_SUBSCRIPTIONS = 64
MAX_PENDING_NOTIFICATIONS = 32
#: How long a subscription waits for the backend's state watch to be live.
WATCH_READY_TIMEOUT_S = 5.0


class _Subscriptions:
    """Which sessions subscribed to which URIs; a state change notifies them (resources/updated).

    Notifications are sent from tasks, at most :data:`MAX_PENDING_NOTIFICATIONS` per session at
    once (a slow client loses updates, not the service's time).
    """

    def __init__(self, backend: ToolBackend) -> None:
        self.backend = backend
        self.by_session: dict[Any, set[str]] = {}
        self.pending: dict[Any, int] = {}
        self._stop: Any = None

    async def add(self, session: Any, uri: str) -> None:
        """Subscribe; returns once the backend's watch is live (a bridge's watch connects to
        the service first, within :data:`WATCH_READY_TIMEOUT_S`), so no later change is missed."""
        uris = self.by_session.setdefault(session, set())
        if len(uris) >= MAX_SUBSCRIPTIONS and uri not in uris:
            raise ValueError(f"at most {MAX_SUBSCRIPTIONS} subscriptions per session")
        uris.add(uri)
        if self._stop is None:
            watch = getattr(self.backend, "watch", None)
            self._stop = watch(self._changed) if watch is not None else (lambda: None)
        ready = getattr(self.backend, "watch_ready", None)
        if ready is not None:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(WATCH_READY_TIMEOUT_S):
                    await ready()

    def remove(self, session: Any, uri: str) -> None:
        self.by_session.get(session, set()).discard(uri)

    def _changed(self, uris: list[str]) -> None:
        for session, wanted in list(self.by_session.items()):
            for uri in uris:
                if uri in wanted and self.pending.get(session, 0) < MAX_PENDING_NOTIFICATIONS:
                    self.pending[session] = self.pending.get(session, 0) + 1
                    asyncio.get_running_loop().create_task(self._send(session, uri))

    async def _send(self, session: Any, uri: str) -> None:
        try:
            await session.send_resource_updated(uri)
        except Exception:  # the session is gone: forget it
            self.by_session.pop(session, None)
        finally:
            self.pending[session] = max(self.pending.get(session, 1) - 1, 0)


def build_server(backend: ToolBackend, *, name: str = "clawseed-edge") -> Server[Any]:
    """An SDK ``Server`` whose handlers go through ``backend``."""
    subscriptions = _Subscriptions(backend)

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        tools = []
        for tool in await backend.tools():
            hints = annotations_for(tool["risk"])
            tools.append(
                types.Tool(
                    name=tool["name"],
                    description=tool["description"],
                    input_schema=tool["parameters"],
                    annotations=types.ToolAnnotations(
                        read_only_hint=hints["readOnlyHint"],
                        destructive_hint=hints["destructiveHint"],
                    ),
                )
            )
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = dict(params.arguments or {})
        if len(json.dumps(arguments, default=str)) > MAX_ARGUMENT_CHARS:
            return _error(f"the arguments are over {MAX_ARGUMENT_CHARS} characters; send less")
        async with asking(_asker(ctx)):
            answer = await backend.call(params.name, arguments)
        if not answer.get("ok"):
            return _error(str(answer.get("error") or f"{params.name} failed"))
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=str(answer.get("output", "")))]
        )

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        states = await backend.states()
        resources = [
            _resource("clawseed://devices", "devices", "Every device's state (JSON)"),
            _resource("clawseed://sensors", "sensors", "Every sensor's last reading (JSON)"),
        ]
        for device in states["devices"]:
            uri = f"device://{device.get('device', '')}"
            resources.append(_resource(uri, str(device.get("device")), "A device's state"))
        for reading in states["readings"]:
            uri = f"sensor://{reading.get('sensor', '')}"
            resources.append(_resource(uri, str(reading.get("sensor")), "A sensor's reading"))
        for pinout in await backend.pinouts():
            key = _board_key(pinout)
            what = f"The pinout of {pinout.get('name')} as configured: used, reserved, free pins"
            resources.append(_resource(f"board://{key}", key, what))
        return types.ListResourcesResult(resources=resources)

    async def read_resource(
        ctx: Any, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)[:MAX_URI_CHARS]
        states = await backend.states()
        value: Any
        if uri == "clawseed://devices":
            value = states["devices"]
        elif uri == "clawseed://sensors":
            value = states["readings"]
        elif uri.startswith("device://"):
            value = _one(states["devices"], "device", uri.removeprefix("device://"), uri)
        elif uri.startswith("sensor://"):
            value = _one(states["readings"], "sensor", uri.removeprefix("sensor://"), uri)
        elif uri.startswith("board://"):
            boards = {_board_key(p): p for p in await backend.pinouts()}
            value = boards.get(uri.removeprefix("board://"))
            if value is None:
                known = ", ".join(f"board://{k}" for k in boards) or "none"
                raise ValueError(f"no board {uri!r}; known: {known}")
        else:
            raise ValueError(
                f"no resource {uri!r}: list them with resources/list (clawseed://devices, "
                "clawseed://sensors, device://<name>, sensor://<name>, board://<name>)"
            )
        text = json.dumps(value, default=str)[:MAX_RESULT_CHARS]
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type="application/json", text=text)]
        )

    async def subscribe(ctx: Any, params: types.SubscribeRequestParams) -> types.EmptyResult:
        await subscriptions.add(ctx.session, str(params.uri)[:MAX_URI_CHARS])
        return types.EmptyResult()

    async def unsubscribe(ctx: Any, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
        subscriptions.remove(ctx.session, str(params.uri)[:MAX_URI_CHARS])
        return types.EmptyResult()

    async def list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
        prompts = []
        for key, (description, text) in _PROMPTS.items():
            arguments = (
                [
                    types.PromptArgument(
                        name="device", description="the device's name", required=True
                    )
                ]
                if "{device}" in text
                else []
            )
            prompts.append(types.Prompt(name=key, description=description, arguments=arguments))
        return types.ListPromptsResult(prompts=prompts)

    async def get_prompt(ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        if params.name not in _PROMPTS:
            raise ValueError(f"no prompt {params.name[:60]!r}; known: {', '.join(_PROMPTS)}")
        description, text = _PROMPTS[params.name]
        device = str((params.arguments or {}).get("device", "the device"))[:60]
        return types.GetPromptResult(
            description=description,
            messages=[
                types.PromptMessage(
                    role="user",
                    content=types.TextContent(type="text", text=text.format(device=device)),
                )
            ],
        )

    return Server(
        name,
        instructions=(
            "Tools of a clawseed-edge board: its devices, sensors and enabled built-ins. Every "
            "call passes the board's security policy; a refused call says why."
        ),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
        on_subscribe_resource=subscribe,
        on_unsubscribe_resource=unsubscribe,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
    )


def _asker(ctx: Any) -> Any:
    """A function that asks this request's client, or None when it cannot be asked."""
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    session = ctx.session
    capabilities = session.client_capabilities
    if capabilities is None or capabilities.elicitation is None:
        return None
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return None  # no back-channel for server-initiated requests: the broker asks

    async def ask(message: str) -> bool | None:
        import anyio

        try:
            with anyio.fail_after(ELICIT_TIMEOUT_S):
                result = await session.elicit_form(
                    message, _APPROVE_SCHEMA, related_request_id=ctx.request_id
                )
        except TimeoutError:
            return False  # asked, and no one answered: a refusal
        except Exception as exc:  # the client could not be asked after all
            log.warning("MCP elicitation failed (%s); asking the approvals broker", exc)
            return None
        return result.action == "accept" and bool((result.content or {}).get("approve"))

    return ask


def _resource(uri: str, name: str, description: str) -> types.Resource:
    return types.Resource(uri=uri, name=name, description=description, mime_type="application/json")


def _board_key(pinout: dict[str, Any]) -> str:
    """A pinout's name in its URI: the peripheral driving the board, else the board id."""
    return str(pinout.get("peripheral") or pinout.get("board"))


def _one(items: list[dict[str, Any]], key: str, name: str, uri: str) -> dict[str, Any]:
    for item in items:
        if item.get(key) == name:
            return item
    raise ValueError(f"no {key} {name[:60]!r} ({uri}); list them with resources/list")


def _error(message: str) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=message[:MAX_RESULT_CHARS])], is_error=True
    )


async def serve_stdio(backend: ToolBackend) -> None:
    """Serve MCP on this process's stdin/stdout until the client closes it."""
    from mcp.server.stdio import stdio_server

    server = build_server(backend)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


class McpHttp:
    """The MCP server as streamable HTTP, for the gateway's ``/mcp`` (behind its tokens).

    ``app`` is the ASGI app to mount; :meth:`start` runs the SDK's session manager in a task
    of its own (its task group must be left in the task that entered it), :meth:`aclose` ends
    it with every session.
    """

    def __init__(self, backend: ToolBackend) -> None:
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

        self.manager = StreamableHTTPSessionManager(build_server(backend))
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def app(self, scope: Any, receive: Any, send: Any) -> None:
        await self.manager.handle_request(scope, receive, send)

    async def start(self) -> None:
        started = asyncio.Event()

        async def run() -> None:
            async with self.manager.run():
                started.set()
                await self._stop.wait()

        self._task = asyncio.create_task(run(), name="mcp-http")
        waiter = asyncio.create_task(started.wait())
        await asyncio.wait({self._task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()
        if self._task.done():
            self._task.result()  # raises what stopped it

    async def aclose(self) -> None:
        """End every session. Idempotent."""
        self._stop.set()
        if self._task is not None and not self._task.done():
            await asyncio.wait({self._task}, timeout=5.0)
            if not self._task.done():
                self._task.cancel()

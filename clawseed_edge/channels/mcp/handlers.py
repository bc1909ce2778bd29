"""The MCP methods we serve, over a :class:`~.backend.ToolBackend`, on no SDK.

:class:`McpServer` takes one decoded JSON-RPC message of a :class:`~.session.Session` and
gives the response (or None for a notification, a response, or a cancelled request); the
transports (:mod:`.stdio`, :mod:`.http`) only move bytes. Both protocol eras are answered:
``initialize`` (2025-06-18, 2025-11-25) and per-request ``_meta`` (2026-07-28, with
``server/discover``). Tools come with JSON schemas and annotations; resources are the
devices' states (``device://<name>``, ``clawseed://devices``), the sensors' readings
(``sensor://<name>``, ``clawseed://sensors``) and each board's pinout (``board://<name>``);
prompts ``what_is_connected`` and ``diagnose_wiring`` (its ``device`` is required).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import Any

from clawseed_edge.tools import mcp_wire as wire
from clawseed_edge.tools.mcp_wire import INVALID_PARAMS, RpcError

from .approval import RequestStates, RoundTrip, legacy_asker
from .backend import MAX_IMAGES, MAX_RESULT_CHARS, ToolBackend, annotations_for
from .eliciting import asking
from .session import Send, Session
from .subscriptions import SubscriptionTable

__all__ = ["McpServer"]

log = logging.getLogger(__name__)

#: Bounds of what one request sends: a call's arguments (as JSON), a URI, a name.
MAX_ARGUMENT_CHARS = 16_000
MAX_URI_CHARS = 200
MAX_NAME_CHARS = 100
#: How long a tool list is trusted to know whether a name is a tool (a miss re-reads it).
TOOL_NAMES_TTL_S = 5.0

INSTRUCTIONS = (
    "Tools of a clawseed-edge board: its devices, sensors and enabled built-ins. Every call "
    "passes the board's security policy; a refused call says why."
)

_PROMPTS: dict[str, tuple[str, str, list[str]]] = {
    "what_is_connected": (
        "List what is wired to this board and the state of each device and sensor.",
        "Read the clawseed://devices and clawseed://sensors resources (or call the read-only "
        "tools) and tell me, in a short table, every device and sensor on this board: its "
        "name, kind, pin and current state or reading. Do not switch anything.",
        [],
    ),
    "diagnose_wiring": (
        "Check a device's wiring step by step, without switching anything unasked.",
        "Help me diagnose the wiring of the device {device}. First read its state and the "
        "board's health with read-only tools; say what you expect to see and what you see. "
        "Propose one switch at a time and wait for my approval before each.",
        ["device"],
    ),
}

_TEMPLATES = [
    ("device://{name}", "device", "A device's state (JSON)"),
    ("sensor://{name}", "sensor", "A sensor's last reading (JSON)"),
    ("board://{name}", "board", "A board's pinout as configured: used, reserved, free pins"),
]

#: Methods answered without a handshake, and those whose 2026-era result may be cached.
_NO_HANDSHAKE = {"initialize", "ping", "server/discover"}
_CACHEABLE = {"tools/list", "resources/list", "resources/templates/list", "prompts/list"}


class McpServer:
    """The MCP server of a backend.

    Args:
        backend: Tools, calls, states, pinouts, state changes.
        name: ``serverInfo.name``.
        version: ``serverInfo.version`` (the package's).
    """

    def __init__(
        self, backend: ToolBackend, *, name: str = "clawseed-edge", version: str = ""
    ) -> None:
        if not version:
            from clawseed_edge import __version__ as version
        self.backend = backend
        self.info = {"name": name, "version": version}
        self.subscriptions = SubscriptionTable(backend)
        self.states = RequestStates()
        self._tool_names: set[str] = set()
        self._tool_names_at = -TOOL_NAMES_TTL_S
        self._methods = {
            "initialize": self._initialize,
            "server/discover": self._discover,
            "ping": self._ping,
            "tools/list": self._list_tools,
            "tools/call": self._call_tool,
            "resources/list": self._list_resources,
            "resources/templates/list": self._list_templates,
            "resources/read": self._read_resource,
            "resources/subscribe": self._subscribe,
            "resources/unsubscribe": self._unsubscribe,
            "prompts/list": self._list_prompts,
            "prompts/get": self._get_prompt,
            "logging/setLevel": self._ping,
        }

    # --- messages ------------------------------------------------------------------------

    async def handle(self, session: Session, message: Any, send: Send) -> dict[str, Any] | None:
        """The response to ``message`` (None: nothing to answer). Never raises for bad input."""
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return wire.error(None, wire.INVALID_REQUEST, "not a JSON-RPC 2.0 message")
        method = message.get("method")
        if method is None:
            if "id" in message and ("result" in message or "error" in message):
                session.answered(message)  # a client's answer to our elicitation
                return None
            return wire.error(message.get("id"), wire.INVALID_REQUEST, "no method")
        if "id" not in message:
            self._notified(session, str(method), message.get("params"))
            return None
        request_id = message["id"]
        if not isinstance(request_id, str | int) or isinstance(request_id, bool):
            return wire.error(None, wire.INVALID_REQUEST, "the id must be a string or a number")
        task = asyncio.current_task()
        if task is not None:
            session.tasks[request_id] = task
        try:
            value = await self._request(session, str(method), message.get("params"), send)
        except RpcError as exc:
            return wire.error(request_id, exc.rpc_code, str(exc), exc.data)
        except asyncio.CancelledError:
            if request_id not in session.cancelled or task is None:
                raise  # the transport is stopping, not the client cancelling
            session.cancelled.discard(request_id)
            task.uncancel()
            return None  # a cancelled request is answered no more
        except Exception:
            log.exception("MCP %s failed", str(method)[:60])
            return wire.error(request_id, wire.INTERNAL_ERROR, "internal error; see the log")
        finally:
            session.tasks.pop(request_id, None)
        return wire.result(request_id, value)

    def _notified(self, session: Session, method: str, params: Any) -> None:
        if method == "notifications/cancelled" and isinstance(params, dict):
            session.cancel(params.get("requestId"))
        # notifications/initialized and the rest need nothing from us

    async def _request(self, session: Session, method: str, params: Any, send: Send) -> Any:
        params = params if isinstance(params, dict) else {}
        version = wire.request_version(params)
        modern = version is not None
        if modern and version not in wire.MODERN_VERSIONS:
            raise RpcError(
                wire.UNSUPPORTED_VERSION,
                f"protocol version {version!r} is not supported",
                {
                    "supported": [*wire.MODERN_VERSIONS, *wire.HANDSHAKE_VERSIONS],
                    "requested": version,
                },
            )
        if not modern and session.version is None and method not in _NO_HANDSHAKE:
            raise RpcError(wire.INVALID_REQUEST, f"{method[:60]}: send initialize first")
        handler = self._methods.get(method)
        if handler is None:
            raise RpcError(wire.METHOD_NOT_FOUND, f"no method {method[:60]!r}")
        value = await handler(session, params, send, modern)
        if modern and value.get("resultType") is None:
            value = {**value, "resultType": "complete"}
            value["_meta"] = {wire.META_SERVER: self.info}
            if method in _CACHEABLE:
                value.update(cacheScope="private", ttlMs=0)
        return value

    # --- lifecycle -----------------------------------------------------------------------

    async def _initialize(
        self, session: Session, params: dict[str, Any], send: Send, modern: bool
    ) -> Any:
        asked = str(params.get("protocolVersion", ""))[:40]
        session.version = asked if asked in wire.HANDSHAKE_VERSIONS else wire.LATEST_HANDSHAKE
        capabilities = params.get("capabilities")
        session.capabilities = capabilities if isinstance(capabilities, dict) else {}
        info = params.get("clientInfo")
        session.client_info = info if isinstance(info, dict) else {}
        return {
            "protocolVersion": session.version,
            "capabilities": self._capabilities(subscribe=True),
            "serverInfo": self.info,
            "instructions": INSTRUCTIONS,
        }

    async def _discover(
        self, session: Session, params: dict[str, Any], send: Send, modern: bool
    ) -> Any:
        return {
            "supportedVersions": [*wire.MODERN_VERSIONS, *wire.HANDSHAKE_VERSIONS],
            # 2026-era subscriptions are a stream of their own: not served (docs/mcp.md)
            "capabilities": self._capabilities(subscribe=False),
            "instructions": INSTRUCTIONS,
            "cacheScope": "private",
            "ttlMs": 0,
        }

    @staticmethod
    def _capabilities(*, subscribe: bool) -> dict[str, Any]:
        return {
            "tools": {"listChanged": False},
            "resources": {"subscribe": subscribe, "listChanged": False},
            "prompts": {"listChanged": False},
            "logging": {},
        }

    async def _ping(
        self, session: Session, params: dict[str, Any], send: Send, modern: bool
    ) -> Any:
        return {}

    # --- tools ---------------------------------------------------------------------------

    async def _list_tools(
        self, session: Session, params: dict[str, Any], send: Send, modern: bool
    ) -> Any:
        tools = []
        listed = await self.backend.tools()
        self._remember_tools(listed)
        for tool in listed:
            annotations = annotations_for(tool["risk"], tool["name"])
            tools.append(
                {
                    "name": tool["name"],
                    "title": annotations["title"],
                    "description": tool["description"],
                    "inputSchema": tool["parameters"],
                    "annotations": annotations,
                }
            )
        return {"tools": tools}

    def _remember_tools(self, listed: list[dict[str, Any]]) -> None:
        self._tool_names = {str(t["name"]) for t in listed}
        self._tool_names_at = asyncio.get_running_loop().time()

    async def _is_tool(self, name: str) -> bool:
        fresh = asyncio.get_running_loop().time() - self._tool_names_at < TOOL_NAMES_TTL_S
        if name in self._tool_names and fresh:
            return True
        self._remember_tools(await self.backend.tools())
        return name in self._tool_names

    async def _call_tool(
        self, session: Session, params: dict[str, Any], send: Send, modern: bool
    ) -> Any:
        name = params.get("name")
        arguments = params.get("arguments") or {}
        if not isinstance(name, str) or not name or len(name) > MAX_NAME_CHARS:
            raise RpcError(INVALID_PARAMS, "tools/call needs a tool name (see tools/list)")
        if not isinstance(arguments, dict):
            raise RpcError(INVALID_PARAMS, f"{name}: arguments must be an object")
        if len(json.dumps(arguments, default=str)) > MAX_ARGUMENT_CHARS:
            raise RpcError(
                INVALID_PARAMS, f"the arguments are over {MAX_ARGUMENT_CHARS} characters; send less"
            )
        if not await self._is_tool(name):
            raise RpcError(INVALID_PARAMS, f"unknown tool {name[:60]!r}; list them with tools/list")
        found = params.get("_meta")
        meta: dict[str, Any] = found if isinstance(found, dict) else {}
        token = meta.get("progressToken")
        ask: Any = None
        round_trip: RoundTrip | None = None
        if session.may_approve and modern:
            if session.can_elicit(meta.get(wire.META_CAPABILITIES)):
                round_trip = RoundTrip(self.states, session.owner, name, arguments, params)
                ask = round_trip
        elif session.may_approve and session.can_elicit():

            async def request(method: str, body: dict[str, Any], timeout_s: float) -> Any:
                return await session.request(send, method, body, timeout_s)

            ask = legacy_asker(request)
        async with asking(ask):
            answer = await self.backend.call(name, arguments)
        if round_trip is not None and round_trip.question is not None:
            return round_trip.input_required()
        if token is not None:  # the call is done: its one progress step (a JSON answer has
            with contextlib.suppress(RpcError, OSError):  # no stream for it: then none)
                await send(_progress(token))
        text = str(
            answer.get("output", "")
            if answer.get("ok")
            else answer.get("error") or f"{name} failed"
        )
        content: list[dict[str, Any]] = [{"type": "text", "text": text[:MAX_RESULT_CHARS]}]
        for image in answer.get("images", ())[:MAX_IMAGES]:  # MCP image content (a snapshot)
            mime = "image/jpeg" if image.startswith("/9j/") else "image/png"
            content.append({"type": "image", "data": image, "mimeType": mime})
        return {"content": content, "isError": not answer.get("ok")}

    # --- resources -----------------------------------------------------------------------

    async def _list_resources(
        self, session: Session, params: dict[str, Any], send: Send, modern: bool
    ) -> Any:
        states = await self.backend.states()
        resources = [
            _resource("clawseed://devices", "devices", "Every device's state (JSON)"),
            _resource("clawseed://sensors", "sensors", "Every sensor's last reading (JSON)"),
        ]
        for device in states["devices"]:
            name = str(device.get("device", ""))
            resources.append(_resource(f"device://{name}", name, "A device's state"))
        for reading in states["readings"]:
            name = str(reading.get("sensor", ""))
            resources.append(_resource(f"sensor://{name}", name, "A sensor's reading"))
        for pinout in await self.backend.pinouts():
            key = _board_key(pinout)
            what = f"The pinout of {pinout.get('name')} as configured: used, reserved, free pins"
            resources.append(_resource(f"board://{key}", key, what))
        return {"resources": resources}

    async def _list_templates(
        self, session: Session, params: dict[str, Any], send: Send, modern: bool
    ) -> Any:
        return {
            "resourceTemplates": [
                {
                    "uriTemplate": uri,
                    "name": name,
                    "description": what,
                    "mimeType": "application/json",
                }
                for uri, name, what in _TEMPLATES
            ]
        }

    async def _read_resource(
        self, session: Session, params: dict[str, Any], send: Send, modern: bool
    ) -> Any:
        uri = _uri(params)
        value: Any
        if uri.startswith("board://"):
            boards = {_board_key(p): p for p in await self.backend.pinouts()}
            value = boards.get(uri.removeprefix("board://"))
            if value is None:
                known = ", ".join(f"board://{k}" for k in boards) or "none"
                raise RpcError(INVALID_PARAMS, f"no board {uri!r}; known: {known}")
        else:
            value = self._state_of(uri, await self.backend.states())
        text = json.dumps(value, default=str)[:MAX_RESULT_CHARS]
        return {"contents": [{"uri": uri, "mimeType": "application/json", "text": text}]}

    @staticmethod
    def _state_of(uri: str, states: dict[str, Any]) -> Any:
        if uri == "clawseed://devices":
            return states["devices"]
        if uri == "clawseed://sensors":
            return states["readings"]
        if uri.startswith("device://"):
            return _one(states["devices"], "device", uri.removeprefix("device://"), uri)
        if uri.startswith("sensor://"):
            return _one(states["readings"], "sensor", uri.removeprefix("sensor://"), uri)
        raise RpcError(
            INVALID_PARAMS,
            f"no resource {uri!r}: list them with resources/list (clawseed://devices, "
            "clawseed://sensors, device://<name>, sensor://<name>, board://<name>)",
        )

    async def _subscribe(
        self, session: Session, params: dict[str, Any], send: Send, modern: bool
    ) -> Any:
        if modern:
            raise RpcError(
                wire.METHOD_NOT_FOUND,
                "resources/subscribe is a 2025-era method; read the resource instead",
            )
        uri = _uri(params)

        def notify(changed: str) -> None:
            session.notify(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/resources/updated",
                    "params": {"uri": changed},
                }
            )

        await self.subscriptions.add(session.key, session.owner, uri, notify)
        return {}

    async def _unsubscribe(
        self, session: Session, params: dict[str, Any], send: Send, modern: bool
    ) -> Any:
        self.subscriptions.remove(session.key, _uri(params))
        return {}

    def ended(self, session: Session) -> None:
        """The transport session ended: free what it held."""
        self.subscriptions.drop(session.key)

    # --- prompts -------------------------------------------------------------------------

    async def _list_prompts(
        self, session: Session, params: dict[str, Any], send: Send, modern: bool
    ) -> Any:
        prompts = []
        for key, (description, _, required) in _PROMPTS.items():
            arguments = [
                {"name": a, "description": f"the {a}'s name", "required": True} for a in required
            ]
            prompts.append({"name": key, "description": description, "arguments": arguments})
        return {"prompts": prompts}

    async def _get_prompt(
        self, session: Session, params: dict[str, Any], send: Send, modern: bool
    ) -> Any:
        name = str(params.get("name", ""))[:MAX_NAME_CHARS]
        if name not in _PROMPTS:
            raise RpcError(INVALID_PARAMS, f"no prompt {name[:60]!r}; known: {', '.join(_PROMPTS)}")
        description, text, required = _PROMPTS[name]
        given = params.get("arguments") if isinstance(params.get("arguments"), dict) else {}
        values = {}
        for argument in required:
            value = given.get(argument) if isinstance(given, dict) else None
            if not isinstance(value, str) or not value.strip():
                raise RpcError(
                    INVALID_PARAMS,
                    f"prompt {name} needs the argument {argument!r} (a device's name)",
                )
            values[argument] = value.strip()[:60]
        return {
            "description": description,
            "messages": [
                {"role": "user", "content": {"type": "text", "text": text.format(**values)}}
            ],
        }


def _progress(token: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": token, "progress": 1, "total": 1},
    }


def _uri(params: dict[str, Any]) -> str:
    uri = params.get("uri")
    if not isinstance(uri, str) or not uri:
        raise RpcError(INVALID_PARAMS, "give the resource's uri (see resources/list)")
    if len(uri) > MAX_URI_CHARS:
        raise RpcError(INVALID_PARAMS, f"the uri is over {MAX_URI_CHARS} characters")
    return uri


def _resource(uri: str, name: str, description: str) -> dict[str, Any]:
    return {"uri": uri, "name": name, "description": description, "mimeType": "application/json"}


def _board_key(pinout: dict[str, Any]) -> str:
    """A pinout's name in its URI: the peripheral driving the board, else the board id."""
    return str(pinout.get("peripheral") or pinout.get("board"))


def _one(items: list[dict[str, Any]], key: str, name: str, uri: str) -> dict[str, Any]:
    for item in items:
        if item.get(key) == name:
            return item
    raise RpcError(INVALID_PARAMS, f"no {key} {name[:60]!r} ({uri}); list them with resources/list")

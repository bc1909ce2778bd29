"""``/api/tools``, ``/api/peripherals``, ``/api/sessions`` (and one session's messages),
``/api/sensors/{name}/history``,
``/api/estop``, ``/api/approvals``, and the ``/sse`` event stream.

Hardware actions go the way a model's call goes: a ToolCall for ``gpio_switch`` or
``gpio_set_level``, through the service agent's hook pipeline (the SecurityPolicy first, with its
approvals and rate limits), then the tool. Nothing here touches a peripheral directly except
the emergency stop, which only drives outputs to their declared safe values.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import time
from collections.abc import AsyncIterator
from typing import Any

from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route

from clawseed_edge.api import SessionStore, StateSource, ToolResult
from clawseed_edge.channels.actions import run_action
from clawseed_edge.channels.watch import board_health

from .endpoint import RequestContext, answers_approvals, endpoint
from .errors import ClientError
from .hub import GatewayHub
from .limits import clip
from .routes_camera import camera_routes
from .transcript import shown_messages, shown_title

__all__ = ["api_routes", "run_tool_call"]

log = logging.getLogger(__name__)

#: Seconds between SSE keep-alive comments (proxies drop idle streams).
SSE_KEEPALIVE_S = 15.0
_SESSION_ID = re.compile(r"[A-Za-z0-9_.:-]{1,64}")


async def run_tool_call(
    hub: GatewayHub, name: str, arguments: dict[str, Any], who: str
) -> ToolResult:
    """Run one call through the service agent's hook pipeline and tool, as a turn would.

    Raises:
        ClientError: ``tool_missing`` (404) when no tool of that name is registered.

    Safe to cancel as a turn's tool call is: a cancelled call may already have switched the device.
    """
    if hub.runtime.agent.registry.get(name) is None:
        raise ClientError(
            "tool_missing", f"no {name!r} tool is registered (no device of that kind is wired)", 404
        )
    return await run_action(
        hub.runtime.agent,
        name,
        arguments,
        session_id=f"api-{who}",
        channel="gateway",
        call_prefix="api",
    )


async def list_tools(ctx: RequestContext) -> dict[str, Any]:
    registry = ctx.hub.registry
    tools = []
    for spec in registry.specs():
        tool = registry.get(spec.name)
        tools.append(
            {
                "name": spec.name,
                "description": spec.description,
                "parameters": spec.parameters,
                "source": str(registry.source_of(spec.name)),
                "risk": str(getattr(getattr(tool, "risk", None), "value", "")),
            }
        )
    # Each connected client's own tools (two phones may offer tools of the same name).
    for connection in list(ctx.hub.connections.values()):
        tools.extend(connection.remote_tools())
    return {"tools": tools}


async def list_peripherals(ctx: RequestContext) -> dict[str, Any]:
    assert ctx.who is not None
    peripherals = [await board_health(p) for p in ctx.hub.runtime.peripherals]
    # The devices' states from their peripherals' state feeds, read fresh: no tool runs here.
    devices: list[Any] = []
    for p in ctx.hub.runtime.peripherals:
        if isinstance(p, StateSource):
            with contextlib.suppress(Exception):  # its health above says what is wrong
                async with asyncio.timeout(2.0):
                    await p.refresh()
            devices.extend(state.as_dict() for state in p.states.devices())
    return {"peripherals": peripherals, "devices": devices}


async def act_on_device(ctx: RequestContext) -> JSONResponse:
    assert ctx.who is not None
    device = ctx.request.path_params["device"]
    body = await ctx.json_object()
    if "on" in body:
        if not isinstance(body["on"], bool):
            raise ClientError("body_invalid", "'on' must be true or false")
        name, arguments = "gpio_switch", {"device": device, "on": body["on"]}
    elif "level" in body:
        level = body["level"]
        if isinstance(level, bool) or not isinstance(level, int | float):
            raise ClientError("body_invalid", "'level' must be a number (0..1; servos -1..1)")
        name, arguments = "gpio_set_level", {"device": device, "level": float(level)}
    else:
        raise ClientError(
            "body_invalid", 'send {"on": true|false} to switch, or {"level": 0.5} to set a level'
        )
    result = await run_tool_call(ctx.hub, name, arguments, ctx.who.id)
    if not result.success:
        status = 403 if "security policy" in (result.error or "") else 400
        code = "policy_refused" if status == 403 else "action_failed"
        return JSONResponse({"error": {"code": code, "message": result.error}}, status)
    return JSONResponse(
        {"ok": True, "device": device, "output": result.output, "data": result.data}
    )


async def list_sessions(ctx: RequestContext) -> dict[str, Any]:
    store = ctx.hub.runtime.agent.session_store
    live = {
        sid: {"client": c.who.name, "remote_tools": sorted(c.remote_names)}
        for sid, c in ctx.hub.connections.items()
    }
    stored: list[dict[str, Any]] = []
    if isinstance(store, SessionStore):
        for info in await store.list_sessions(limit=100):
            stored.append(
                {
                    "session_id": info.session_id,
                    "title": shown_title(info.title),
                    # The same count as session_start's messageCount and the session's messages.
                    "message_count": len(await shown_messages(store, info.session_id)),
                    "updated_at": info.updated_at,
                    "connected": info.session_id in live,
                }
            )
    return {"sessions": stored, "connected": live}


async def session_messages(ctx: RequestContext) -> dict[str, Any]:
    session_id = str(ctx.request.path_params["session_id"])
    if _SESSION_ID.fullmatch(session_id) is None:
        raise ClientError(
            "session_id_invalid",
            f"session_id {clip(session_id, 40)!r} is not valid: 1-64 of A-Z a-z 0-9 _.:-",
        )
    store = ctx.hub.runtime.agent.session_store
    if not isinstance(store, SessionStore):
        raise ClientError("sessions_off", "this service keeps no session history", 404)
    return {"session_id": session_id, "messages": await shown_messages(store, session_id)}


#: Points one history answer carries at most (a chart is a few hundred pixels wide).
MAX_HISTORY_POINTS = 500
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")


async def sensor_history(ctx: RequestContext) -> dict[str, Any]:
    """``GET /api/sensors/{name}/history?quantity=&window=24h|from=&to=&points=``."""
    from clawseed_edge.api import ToolArgumentsInvalid
    from clawseed_edge.tools.sensor_history import parse_window

    name = str(ctx.request.path_params["name"])
    query = ctx.request.query_params
    quantity = query.get("quantity")
    if _NAME.fullmatch(name) is None or (
        quantity is not None and _NAME.fullmatch(quantity) is None
    ):
        raise ClientError(
            "sensor_invalid",
            f"{clip(name, 40)!r}: a sensor or quantity name is 1-64 of A-Z a-z 0-9 _",
        )
    configured = _configured_sensors(ctx)
    history = ctx.hub.history
    if history is None:
        if configured is not None and name not in configured:
            raise _unknown_sensor(name, configured)
        raise ClientError(
            "history_off",
            "no sensor history is kept: give a sensor an update_interval, [history] enabled = true",
            404,
        )
    try:
        points = int(query.get("points", "120"))
    except ValueError:
        raise ClientError("points_invalid", "points: a whole number 1..500") from None
    if not 1 <= points <= MAX_HISTORY_POINTS:
        raise ClientError("points_invalid", f"points: a whole number 1..{MAX_HISTORY_POINTS}")
    args = [
        clip(v, 40) if (v := query.get(k)) is not None else None for k in ("window", "from", "to")
    ]
    now = time.time()
    try:
        start, end, label = parse_window(args[0] or query.get("since"), args[1], args[2], now=now)
    except ToolArgumentsInvalid as exc:
        raise ClientError("window_invalid", str(exc)) from None
    stored = [q for s, q, _ in await history.series() if s == name]
    if not stored:
        if configured is not None and name not in configured:
            raise _unknown_sensor(name, configured)
        raise ClientError(
            "history_empty",
            f"no history yet for {name!r}: the service records a sensor that has an "
            'update_interval (not "never") while it runs',
            404,
        )
    if quantity is not None:
        if quantity not in stored:
            raise ClientError("quantity_unknown", f"{name} has no history of {quantity!r}", 404)
        stored = [quantity]
    out = []
    for q in stored[:16]:
        summary = await history.summary(name, q, start, end, points=points, now=now)
        if summary is not None:
            out.append(summary.as_dict())
    return {"sensor": name, "window": label, "start": start, "end": end, "quantities": out}


def _configured_sensors(ctx: RequestContext) -> list[str] | None:
    """The configured sensors' names (a sensor bank's ``sensor_names()``), None when no
    peripheral says (then a name is judged by the history alone)."""
    names: list[str] | None = None
    for p in ctx.hub.runtime.peripherals:
        listed = getattr(p, "sensor_names", None)
        if callable(listed):
            names = (names or []) + [str(n) for n in listed()]
    return names


def _unknown_sensor(name: str, configured: list[str]) -> ClientError:
    shown = ", ".join(configured[:32]) or "none"
    return ClientError(
        "sensor_unknown", f"no sensor named {name!r}; configured sensors: {shown}", 404
    )


async def estop(ctx: RequestContext) -> JSONResponse:
    assert ctx.who is not None
    failures = await ctx.hub.estop(f"estop from {ctx.who.name}")
    status = 200 if not failures else 500
    return JSONResponse({"ok": not failures, "failures": failures}, status)


async def answer_approval(ctx: RequestContext) -> JSONResponse:
    assert ctx.who is not None
    body = await ctx.json_object()
    approved = body.get("approved")
    if not isinstance(approved, bool):
        raise ClientError("body_invalid", 'send {"approved": true|false}')
    request_id = ctx.request.path_params["request_id"]
    if not ctx.hub.broker.resolve(request_id, approved, by=ctx.who.name):
        raise ClientError(
            "approval_unknown",
            f"approval {clip(request_id, 40)!r} is not waiting (answered, timed out, or unknown)",
            404,
        )
    return JSONResponse({"ok": True})


async def sse(ctx: RequestContext) -> StreamingResponse:
    hub = ctx.hub
    assert ctx.who is not None
    hardware = ctx.request.query_params.get("hardware", "") in ("1", "true", "yes")
    # Approval requests reach it through the gateway channel (GatewayHub.ask).
    queue = hub.open_sse(
        hardware=hardware,
        answers=answers_approvals(ctx.request.query_params),
        token_id=ctx.who.id,
    )

    async def stream() -> AsyncIterator[str]:
        try:
            yield ": connected\n\n"
            while True:
                try:
                    async with asyncio.timeout(SSE_KEEPALIVE_S):
                        frame = await queue.get()
                except TimeoutError:
                    yield ": keep-alive\n\n"
                    continue
                if frame is None:
                    return
                kind = frame.get("type", "message")
                yield f"event: {kind}\ndata: {json.dumps(frame, default=str)}\n\n"
        finally:
            hub.close_sse(queue)

    return StreamingResponse(
        stream(), media_type="text/event-stream", headers={"Cache-Control": "no-cache"}
    )


def api_routes(hub: GatewayHub) -> list[Route]:
    return [
        Route("/api/tools", endpoint(hub, list_tools), methods=["GET"]),
        Route("/api/peripherals", endpoint(hub, list_peripherals), methods=["GET"]),
        Route("/api/peripherals/{device}", endpoint(hub, act_on_device), methods=["POST"]),
        Route("/api/sessions", endpoint(hub, list_sessions), methods=["GET"]),
        Route("/api/sessions/{session_id}", endpoint(hub, session_messages), methods=["GET"]),
        Route("/api/sensors/{name}/history", endpoint(hub, sensor_history), methods=["GET"]),
        Route("/api/estop", endpoint(hub, estop), methods=["POST"]),
        Route("/api/approvals/{request_id}", endpoint(hub, answer_approval), methods=["POST"]),
        Route("/sse", endpoint(hub, sse), methods=["GET"]),
        *camera_routes(hub),
    ]

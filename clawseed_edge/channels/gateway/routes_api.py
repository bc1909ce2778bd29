"""``/api/tools``, ``/api/peripherals``, ``/api/sessions`` (and one session's messages),
``/api/sensors/{name}/history``,
``/api/estop`` (and its latch: ``GET /api/estop``, ``POST /api/estop/reset``), ``/api/approvals``,
and the ``/sse`` event stream.

Hardware actions are a person's command through the host's one door (``act``, with the paired
client's person as the actor): ``gpio_switch`` or ``gpio_set_level`` through every check a
model's call meets (the SecurityPolicy first, with its approvals and rate limits), then the
tool; a refusal answers 403 with its stable code. Nothing here touches a peripheral directly except
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

from clawseed_edge.api import ESTOP_RESET_HINT, Actor, SessionStore, StateSource, ToolResult
from clawseed_edge.api.wording import for_people
from clawseed_edge.channels.watch import board_health

from .endpoint import RequestContext, answers_approvals, endpoint
from .errors import ClientError
from .hub import GatewayHub
from .limits import clip
from .routes_camera import camera_routes
from .transcript import shown_messages, shown_title

__all__ = ["act_for", "api_routes"]

log = logging.getLogger(__name__)

#: Seconds between SSE keep-alive comments (proxies drop idle streams).
SSE_KEEPALIVE_S = 15.0
_SESSION_ID = re.compile(r"[A-Za-z0-9_.:-]{1,64}")


async def act_for(hub: GatewayHub, name: str, arguments: dict[str, Any], who: str) -> ToolResult:
    """A paired client's person pressing a device button: the host's ``act``, as that person.

    Raises:
        ClientError: ``tool_missing`` (404) when no tool of that name is registered.

    Safe to cancel as a turn's tool call is: a cancelled call may already have switched the device.
    """
    if hub.agent.registry.get(name) is None:
        raise ClientError(
            "tool_missing", f"no {name!r} tool is registered (no device of that kind is wired)", 404
        )
    return await hub.act(name, arguments, Actor("person", "gateway", who))


#: Failed results by code: refused by the policy (or a latched stop) -> 403, else 400.
_REFUSED_CODES = ("policy_denied", "policy_refused", "estop_latched")


async def list_tools(ctx: RequestContext) -> dict[str, Any]:
    tools = ctx.hub.registry.listing()
    # Each connected client's own tools (two phones may offer tools of the same name).
    for connection in list(ctx.hub.connections.values()):
        tools.extend(connection.remote_tools())
    return {"tools": tools}


async def list_peripherals(ctx: RequestContext) -> dict[str, Any]:
    assert ctx.who is not None
    peripherals = [await board_health(p) for p in ctx.hub.peripherals]
    # The devices' states from their peripherals' state feeds, read fresh: no tool runs here.
    devices: list[Any] = []
    for p in ctx.hub.peripherals:
        if isinstance(p, StateSource):
            with contextlib.suppress(Exception):  # its health above says what is wrong
                async with asyncio.timeout(2.0):
                    await p.refresh()
            devices.extend(state.as_dict() for state in p.states.devices())
    return {"peripherals": peripherals, "devices": devices, "estop": _estop_state(ctx.hub)}


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
    result = await act_for(ctx.hub, name, arguments, ctx.who.id)
    if not result.success:
        refused = result.code in _REFUSED_CODES
        code = "action_failed"
        if refused:
            code = "estop_latched" if result.code == "estop_latched" else "policy_refused"
        return JSONResponse(
            {"error": {"code": code, "message": for_people(result.error or "")}},
            403 if refused else 400,
        )
    return JSONResponse(
        {"ok": True, "device": device, "output": result.output, "data": result.data}
    )


async def list_sessions(ctx: RequestContext) -> dict[str, Any]:
    store = ctx.hub.agent.session_store
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
    store = ctx.hub.agent.session_store
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
    for p in ctx.hub.peripherals:
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


async def estop_state(ctx: RequestContext) -> dict[str, Any]:
    """``GET /api/estop``: whether the stop is latched, why and since when (the banner)."""
    return {"estop": _estop_state(ctx.hub)}


async def estop_reset(ctx: RequestContext) -> JSONResponse:
    """``POST /api/estop/reset``: a paired person releases the latch; nothing is switched."""
    assert ctx.who is not None
    reset = await ctx.hub.estop.reset(f"{clip(ctx.who.name, 40)} (web app)")
    return JSONResponse({"ok": True, "reset": reset, "estop": _estop_state(ctx.hub)})


def _estop_state(hub: GatewayHub) -> dict[str, Any]:
    state = hub.estop.latch.state.to_dict()
    if hub.estop.latched:
        state["how_to_reset"] = ESTOP_RESET_HINT
    return state


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
        Route("/api/estop", endpoint(hub, estop_state), methods=["GET"]),
        Route("/api/estop/reset", endpoint(hub, estop_reset), methods=["POST"]),
        Route("/api/approvals/{request_id}", endpoint(hub, answer_approval), methods=["POST"]),
        Route("/sse", endpoint(hub, sse), methods=["GET"]),
        *camera_routes(hub),
    ]

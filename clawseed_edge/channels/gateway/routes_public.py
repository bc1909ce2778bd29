"""``/health``, ``/ready``, ``/pair``, ``/webhook`` and ``/metrics``."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from typing import Any

from starlette.responses import JSONResponse, PlainTextResponse
from starlette.routing import Route

from clawseed_edge import __version__
from clawseed_edge.api import AbortedEvent, DoneEvent, ErrorEvent, ToolContext

from .endpoint import RequestContext, bearer_token, client_key, endpoint
from .errors import ClientError
from .hub import GatewayHub
from .limits import clip
from .metrics import gateway_metrics_text

__all__ = ["public_routes"]


async def health(ctx: RequestContext) -> dict[str, Any]:
    return {"status": "ok", "version": __version__}


async def ready(ctx: RequestContext) -> JSONResponse:
    runtime = ctx.hub.runtime
    checks: dict[str, dict[str, Any]] = {}
    probe = getattr(runtime.provider, "probe", None)
    try:
        if probe is not None:
            async with asyncio.timeout(3.0):
                await probe()
        checks["provider"] = {
            "ok": True,
            "detail": f"{runtime.provider.name}/{runtime.provider.model}",
        }
    except Exception as exc:
        checks["provider"] = {"ok": False, "detail": clip(exc, 200)}
    try:
        async with asyncio.timeout(2.0):
            ok = await runtime.memory.health_check()
        checks["memory"] = {"ok": bool(ok), "detail": "open" if ok else "not healthy"}
    except Exception as exc:
        checks["memory"] = {"ok": False, "detail": clip(exc, 200)}
    for p in ctx.hub.peripherals:
        try:
            async with asyncio.timeout(2.0):
                status = await p.health_check()
            checks[f"peripheral:{p.name}"] = {"ok": status.healthy, "detail": status.detail}
        except Exception as exc:
            checks[f"peripheral:{p.name}"] = {"ok": False, "detail": clip(exc, 200)}
    ok = all(c["ok"] for c in checks.values()) and ctx.hub.accepting
    if not await _has_valid_token(ctx):
        # Unauthenticated callers (a health poller, anyone on the network) learn whether each
        # part is up, not which model or board it is.
        checks = {name: {"ok": c["ok"]} for name, c in checks.items()}
    return JSONResponse({"ready": ok, "checks": checks}, 200 if ok else 503)


async def _has_valid_token(ctx: RequestContext) -> bool:
    token = bearer_token(ctx.request.headers, ctx.request.query_params)
    if token is None:
        return not ctx.hub.pairing.required
    try:
        await ctx.hub.pairing.authenticate(token)
    except ClientError:
        return False
    return True


async def pair(ctx: RequestContext) -> dict[str, Any]:
    request = ctx.request
    name = clip(request.headers.get("x-client-name") or "client", 64)
    issued = await ctx.hub.pairing.pair(
        client_key(request), request.headers.get("x-pairing-code"), name
    )
    return {"token": issued.token, "id": issued.info.id, "name": issued.info.name}


async def webhook(ctx: RequestContext) -> JSONResponse:
    body = await ctx.json_object()
    text = body.get("message")
    limit = ctx.hub.settings.max_message_chars
    if not isinstance(text, str) or not text.strip():
        raise ClientError("body_invalid", 'send {"message": "..."} with a non-empty message')
    if len(text) > limit:
        raise ClientError(
            "too_large", f"the message has {len(text)} characters, over the limit of {limit}", 413
        )
    assert ctx.who is not None
    session = body.get("session_id") or f"webhook-{ctx.who.id}"
    if not isinstance(session, str) or len(session) > 64:
        raise ClientError("body_invalid", "session_id must be a string of at most 64 characters")
    key = ctx.request.headers.get("x-idempotency-key")

    async def answer() -> dict[str, Any]:
        return await _run_webhook_turn(ctx.hub, text, session)

    if key:
        if len(key) > 128:
            raise ClientError("body_invalid", "X-Idempotency-Key is longer than 128 characters")
        result, replayed = await ctx.hub.idempotency.run(f"{ctx.who.id}:{key}", answer)
    else:
        result, replayed = await answer(), False
    headers = {"X-Idempotent-Replay": "true"} if replayed else {}
    status = 200 if result.get("ok") else 502
    return JSONResponse(result, status, headers=headers)


async def _run_webhook_turn(hub: GatewayHub, text: str, session: str) -> dict[str, Any]:
    agent = hub.agent
    context = ToolContext(session_id=session, channel="webhook")
    turn_id = uuid.uuid4().hex[:12]
    last: Any = None
    async with contextlib.aclosing(agent.turn(text, session_id=session, context=context)) as ev:
        async for event in ev:
            last = event
    if isinstance(last, DoneEvent):
        return {"ok": True, "id": turn_id, "session_id": session, "response": last.text}
    if isinstance(last, AbortedEvent):
        return {"ok": False, "id": turn_id, "error": {"code": "aborted", "message": last.reason}}
    if isinstance(last, ErrorEvent):
        return {"ok": False, "id": turn_id, "error": {"code": last.code, "message": last.message}}
    return {"ok": False, "id": turn_id, "error": {"code": "no_answer", "message": "no answer"}}


async def metrics(ctx: RequestContext) -> PlainTextResponse:
    text = await gateway_metrics_text(ctx.hub)
    return PlainTextResponse(text, media_type="text/plain; version=0.0.4; charset=utf-8")


def public_routes(hub: GatewayHub) -> list[Route]:
    return [
        Route("/health", endpoint(hub, health, public=True), methods=["GET"]),
        Route("/ready", endpoint(hub, ready, public=True), methods=["GET"]),
        Route("/pair", endpoint(hub, pair, public=True), methods=["POST"]),
        Route("/webhook", endpoint(hub, webhook), methods=["POST"]),
        Route("/metrics", endpoint(hub, metrics), methods=["GET"]),
    ]

"""``GET /api/cameras``, ``/api/cameras/{name}/latest.jpg`` and
``/api/cameras/{name}/snapshots/{file}``: the snapshots already taken.

Nothing here takes a picture (that is ``camera_snapshot``, behind the policy): a paired client
sees the newest file a camera stored (the Devices screen), or one named file of its snapshot
store (the picture a turn took, shown in the chat: :mod:`.pictures`).
"""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.responses import Response
from starlette.routing import Route

from clawseed_edge.agent.pictures import CAMERA_NAME, SNAPSHOT_FILE

from .endpoint import RequestContext, endpoint
from .errors import ClientError
from .hub import GatewayHub
from .limits import clip

__all__ = ["camera_routes"]

#: The largest file served (a camera refuses larger frames itself; this bounds a stray file).
MAX_BYTES = 20_000_000


def _cameras(ctx: RequestContext) -> Any | None:
    for p in ctx.hub.runtime.peripherals:
        if callable(getattr(p, "camera_names", None)) and callable(getattr(p, "latest", None)):
            return p
    return None


async def list_cameras(ctx: RequestContext) -> dict[str, Any]:
    """``{"cameras": [{"name", "latest"}]}``: ``latest`` is the newest snapshot's URL or None."""
    bank = _cameras(ctx)
    if bank is None:
        return {"cameras": []}
    out = []
    for name in bank.camera_names():
        latest = bank.latest(name)
        out.append({"name": name, "latest": f"/api/cameras/{name}/latest.jpg" if latest else None})
    return {"cameras": out}


def _bank_for(ctx: RequestContext, name: str) -> Any:
    bank = _cameras(ctx)
    if CAMERA_NAME.fullmatch(name) is None or bank is None or name not in bank.camera_names():
        known = ", ".join(bank.camera_names()) if bank is not None else "none configured"
        raise ClientError("camera_unknown", f"no camera {clip(name, 40)!r} (cameras: {known})", 404)
    return bank


async def stored_snapshot(ctx: RequestContext) -> Response:
    """One stored snapshot of a camera by its file name (a turn's picture), ``image/jpeg``.

    Only a file of the camera's own store is served (named, never a path); one the store has
    dropped (``keep_snapshots``) is a 404 that says so.
    """
    name = str(ctx.request.path_params["name"])
    file = str(ctx.request.path_params["file"])
    bank = _bank_for(ctx, name)
    path = (
        await asyncio.to_thread(bank.stored, name, file) if SNAPSHOT_FILE.fullmatch(file) else None
    )
    data = None if path is None else await asyncio.to_thread(_read, path)
    if data is None:
        raise ClientError(
            "snapshot_gone",
            f"{name} no longer keeps the picture {clip(file, 60)!r} (it keeps its newest "
            "keep_snapshots pictures); ask for a new one",
            404,
        )
    # A stored file never changes: the browser may keep it for this session.
    return Response(
        data, media_type="image/jpeg", headers={"Cache-Control": "private, max-age=3600"}
    )


async def latest_snapshot(ctx: RequestContext) -> Response:
    """The newest stored snapshot of a camera, ``image/jpeg``, not cached."""
    name = str(ctx.request.path_params["name"])
    bank = _bank_for(ctx, name)
    path = bank.latest(name)
    if path is None:
        raise ClientError(
            "snapshot_none", f"{name} has taken no picture yet: ask for one (camera_snapshot)", 404
        )
    data = await asyncio.to_thread(_read, path)
    if data is None:
        raise ClientError("snapshot_none", f"{name}'s latest picture is gone or too large", 404)
    return Response(data, media_type="image/jpeg", headers={"Cache-Control": "no-store"})


def _read(path: Any) -> bytes | None:
    try:
        with path.open("rb") as f:
            data: bytes = f.read(MAX_BYTES + 1)
    except OSError:
        return None
    return data if len(data) <= MAX_BYTES else None


def camera_routes(hub: GatewayHub) -> list[Route]:
    return [
        Route("/api/cameras", endpoint(hub, list_cameras), methods=["GET"]),
        Route("/api/cameras/{name}/latest.jpg", endpoint(hub, latest_snapshot), methods=["GET"]),
        Route(
            "/api/cameras/{name}/snapshots/{file}",
            endpoint(hub, stored_snapshot),
            methods=["GET"],
        ),
    ]

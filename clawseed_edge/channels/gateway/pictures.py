"""The pictures a turn produced, as URLs a paired client loads: never bytes in a frame.

A ``camera_snapshot`` result carries its JPEG for the model (base64, ``ToolResult.images``);
the web client gets ``pictures: [{"camera", "url"}]`` on the ``tool_result`` frame instead,
each URL naming a file of the camera's snapshot store, served behind the same auth by
``GET /api/cameras/{name}/snapshots/{file}`` (:mod:`.routes_camera`). A reloaded session finds
them again in the stored result's text ("saved as snapshots/porch_cam/<file>"); a file the store
has dropped since (``keep_snapshots``) answers 404, and the client says so.
"""

from __future__ import annotations

import re
from typing import Any

from clawseed_edge.agent.pictures import CAMERA_NAME, SNAPSHOT_FILE, stored_picture

__all__ = ["result_pictures", "snapshot_url", "stored_pictures"]

#: Pictures one tool result shows (a snapshot is one).
MAX_PICTURES = 4
_SAVED_AS = re.compile(r"saved as snapshots/([A-Za-z_][A-Za-z0-9_]{0,39})/([A-Za-z0-9_.-]{1,124})")


def snapshot_url(camera: str, file: str) -> str | None:
    """``/api/cameras/<camera>/snapshots/<file>``, or None for a name that is not one."""
    if CAMERA_NAME.fullmatch(camera) is None or SNAPSHOT_FILE.fullmatch(file) is None:
        return None
    return f"/api/cameras/{camera}/snapshots/{file}"


def result_pictures(images: tuple[str, ...], data: Any) -> list[dict[str, str]]:
    """The pictures of a live result: its ``data`` names the camera and the stored file."""
    picture = stored_picture(images, data)
    if picture is None:
        return []
    camera, file = picture
    return [{"camera": camera, "url": f"/api/cameras/{camera}/snapshots/{file}"}]


def stored_pictures(tool: str, text: str) -> list[dict[str, str]]:
    """The pictures of a stored result (a reloaded session), from its text."""
    if tool != "camera_snapshot":
        return []
    out = []
    for camera, file in _SAVED_AS.findall(text)[:MAX_PICTURES]:
        url = snapshot_url(camera, file.rstrip("."))
        if url is not None:
            out.append({"camera": camera, "url": url})
    return out

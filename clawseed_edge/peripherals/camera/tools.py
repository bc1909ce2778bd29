"""``camera_snapshot``: a picture the model can see.

The result's text says what was taken and where it was stored; the JPEG itself travels as the
result's image (base64), which the turn sends with the next model request only. A provider
without vision never gets here: the turn refuses the call first (``returns_images``).
"""

from __future__ import annotations

import base64
import time
from collections.abc import Mapping
from typing import Any, Protocol

from clawseed_edge.api import (
    BaseTool,
    DeviceAction,
    HardwareError,
    PolicyDenied,
    RiskClass,
    ToolContext,
    ToolResult,
)

from .config import CameraConfig
from .store import Snapshot

__all__ = ["CameraSnapshotTool"]


class Cameras(Protocol):
    """What the tool needs of the camera bank (and nothing more)."""

    name: str

    def camera_names(self) -> list[str]: ...

    def config(self, camera: str) -> CameraConfig: ...

    def hours_problem(self, camera: str) -> str | None: ...

    async def snapshot(self, camera: str, width: int | None = None) -> Snapshot: ...


class CameraSnapshotTool(BaseTool):
    """Take a picture with a configured camera and show it to the model."""

    name = "camera_snapshot"
    risk = RiskClass.READ
    #: The turn refuses this tool for a model that cannot see images (before it runs).
    returns_images = True

    def __init__(self, bank: Cameras) -> None:
        self.bank = bank
        names = bank.camera_names()
        widest = max((bank.config(n).resolution[0] for n in names), default=640)
        self.description = (
            "Take a picture with a camera and look at it (you receive the image). Use it to "
            "answer what a place looks like. Cameras: " + ", ".join(names)
        )
        self.parameters = {
            "type": "object",
            "properties": {
                "camera": {"type": "string", "enum": names, "description": "Which camera."},
                "width": {
                    "type": "integer",
                    "minimum": 64,
                    "maximum": widest,
                    "description": "Picture width in pixels (smaller is cheaper); default: "
                    "the camera's resolution.",
                },
            },
            "required": ["camera"],
            "additionalProperties": False,
        }

    def describe_action(self, arguments: Mapping[str, Any]) -> DeviceAction | None:
        camera = str(arguments.get("camera", ""))
        if camera not in self.bank.camera_names():
            return None  # execute() names the cameras
        config = self.bank.config(camera)
        hours = self.bank.hours_problem(camera)
        return DeviceAction(
            device=camera,
            kind="camera",
            operation="read",
            requires_approval=config.approval,
            allowed=hours is None,
            summary=hours or f"take a picture with camera {camera}",
            peripheral=self.bank.name,
        )

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        camera = str(arguments.get("camera", ""))
        width = arguments.get("width")
        if width is not None and (isinstance(width, bool) or not isinstance(width, int)):
            return ToolResult.fail(f"width must be a whole number of pixels, not {width!r}")
        try:
            shot = await self.bank.snapshot(camera, width)
        except (HardwareError, PolicyDenied) as exc:
            return ToolResult.fail(str(exc))
        taken = time.strftime("%H:%M:%S", time.localtime(shot.time))
        text = (
            f"Picture from camera {camera} taken at {taken}: {shot.width}x{shot.height} JPEG, "
            f"{len(shot.jpeg):,} bytes, saved as snapshots/{camera}/{shot.path.name}. "
            "The image is attached."
        )
        data = {
            "camera": camera,
            "path": str(shot.path),
            "width": shot.width,
            "height": shot.height,
            "bytes": len(shot.jpeg),
        }
        return ToolResult.ok(text, data, images=(base64.b64encode(shot.jpeg).decode("ascii"),))

"""Pictures a tool returned (``ToolResult.images``), kept for the turn's next requests only.

Like recalled memory, an image is added to the copy of the messages sent to the model, found
by identity, and never written into history: a stored conversation keeps the result's text
("saved as snapshots/porch_cam/..."), not megabytes of base64 in every later request. A model
that cannot see images is refused a tool that returns them before it runs, in words.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import PurePath
from typing import Any

from clawseed_edge.api import ChatMessage, Provider, ToolCall, ToolRegistry, ToolResult

__all__ = ["CAMERA_NAME", "SNAPSHOT_FILE", "TurnPictures", "stored_picture", "vision_refusals"]

#: Pictures one turn carries to the model; older ones are dropped (each may be ~100 KB).
MAX_PICTURES = 4
#: A camera's name (as ``[[cameras]] name`` allows) and a stored snapshot's file name.
CAMERA_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,39}")
SNAPSHOT_FILE = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]{0,119}\.jpg")


def stored_picture(images: Sequence[str], data: Any) -> tuple[str, str] | None:
    """``(camera, file)`` of a result that carries a picture (``images``) and whose ``data``
    names the camera and the stored ``path``; None for anything else or a name that is not one.
    The channels find the file again in that camera's own store, by these names only."""
    if not images or not isinstance(data, Mapping):
        return None
    camera, path = data.get("camera"), data.get("path")
    if not isinstance(camera, str) or not isinstance(path, str):
        return None
    file = PurePath(path).name
    if CAMERA_NAME.fullmatch(camera) is None or SNAPSHOT_FILE.fullmatch(file) is None:
        return None
    return camera, file


def vision_refusals(
    calls: Sequence[ToolCall], registry: ToolRegistry, provider: Provider
) -> list[str | None]:
    """Per call, why it is refused because the model cannot see (None: it may run)."""
    capabilities = getattr(provider, "capabilities", None)
    if getattr(capabilities, "vision", False):
        return [None] * len(calls)
    out: list[str | None] = []
    for call in calls:
        tool = registry.get(call.name)
        if tool is not None and getattr(tool, "returns_images", False):
            model = getattr(provider, "model", "") or getattr(provider, "name", "this model")
            out.append(
                f"{call.name} returns a picture, and the model {model!r} cannot see images, so "
                "no picture was taken. Tell the user; they can configure a vision model (an "
                "Ollama model with vision such as llava, moondream or gemma3, or a remote one), "
                "or a [[providers.routes]] route with images = true (docs/camera.md)"
            )
        else:
            out.append(None)
    return out


class TurnPictures:
    """The pictures of one turn, each tied to the history message that carries its text."""

    def __init__(self) -> None:
        self._pictures: list[tuple[ChatMessage, tuple[str, ...]]] = []

    def keep(
        self, messages: Sequence[ChatMessage], results: Sequence[tuple[ToolCall, ToolResult]]
    ) -> None:
        """Tie each result's images to its message (one per result, or all to the last)."""
        images = [result.images for _, result in results]
        if not any(images) or not messages:
            return
        if len(messages) == len(results):
            pairs: list[tuple[ChatMessage, tuple[str, ...]]] = [
                (m, i) for m, i in zip(messages, images, strict=True) if i
            ]
        else:
            pairs = [(messages[-1], tuple(img for group in images for img in group))]
        self._pictures.extend(pairs)
        del self._pictures[:-MAX_PICTURES]

    def attach(self, messages: Sequence[ChatMessage]) -> tuple[ChatMessage, ...]:
        """``messages`` with the kept pictures on their messages, in this copy only."""
        out: list[Any] = list(messages)
        if not self._pictures:
            return tuple(out)
        for i, message in enumerate(out):
            for holder, images in self._pictures:
                if message is holder:
                    out[i] = replace(message, images=(*message.images, *images))
        return tuple(out)

"""Camera snapshots to Home Assistant's MQTT ``image`` entities.

Publish, then subscribe: the camera bank tells its listeners of each picture it stored, whoever
took it (the model, an automation, a channel); nothing here takes a picture. The JPEG goes out
raw (HA's ``image_topic`` takes the file's bytes, ``content_type: image/jpeg``), retained, so a
restarted Home Assistant shows the newest picture at once: the broker keeps one picture per
camera, the newest. ``[mqtt] camera_images = false`` publishes none and empties the retained
ones. A picture over :data:`MAX_IMAGE_BYTES` is not sent; a snapshot's bytes never reach a log.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .discovery import Topics

__all__ = ["MAX_IMAGE_BYTES", "SnapshotImages", "camera_banks"]

log = logging.getLogger(__name__)

#: The largest picture published (a 1920x1080 JPEG at quality 80 is about 0.5 MB).
MAX_IMAGE_BYTES = 2_000_000


def camera_banks(peripherals: Sequence[Any]) -> list[Any]:
    """The peripherals that are camera banks (they name cameras and tell of snapshots)."""
    return [
        p
        for p in peripherals
        if callable(getattr(p, "camera_names", None)) and callable(getattr(p, "on_snapshot", None))
    ]


class SnapshotImages:
    """The newest picture of each camera, waiting to be published (one per camera: bounded).

    Args:
        topics: The node's topics.
        banks: The camera banks (:func:`camera_banks`).
        enabled: ``[mqtt] camera_images``.
        wake: Called when a picture is waiting (the channel's publisher wakes).
    """

    def __init__(
        self, topics: Topics, banks: Sequence[Any], *, enabled: bool, wake: Callable[[], None]
    ) -> None:
        self.topics = topics
        self.banks = list(banks)
        self.enabled = enabled
        self._wake = wake
        self._pending: dict[str, bytes] = {}

    def cameras(self) -> list[str]:
        """The cameras announced as ``image`` entities (none while disabled)."""
        if not self.enabled:
            return []
        return [name for bank in self.banks for name in bank.camera_names()]

    def subscribe(self) -> list[Callable[[], None]]:
        """Listen to every bank's snapshots; returns the removers."""
        if not self.enabled:
            return []
        return [bank.on_snapshot(self.take) for bank in self.banks]

    def take(self, shot: Any) -> None:
        """A snapshot was stored: keep its bytes for the publisher (the newest wins)."""
        if len(shot.jpeg) > MAX_IMAGE_BYTES:
            log.warning(
                "MQTT: %s's %d-byte picture is over %d bytes; not sent to Home Assistant",
                shot.camera,
                len(shot.jpeg),
                MAX_IMAGE_BYTES,
            )
            return
        self._pending[shot.camera] = shot.jpeg
        self._wake()

    @property
    def waiting(self) -> bool:
        return bool(self._pending)

    async def publish_pending(self, client: Any) -> None:
        """Publish the pictures waiting, each retained on its camera's image topic."""
        while self._pending:
            camera, data = self._pending.popitem()
            await client.publish(self.topics.camera_image(camera), data, qos=1, retain=True)

    async def announce(self, client: Any) -> None:
        """At (re)connect and HA's birth: the newest stored picture of each camera (a broker
        restarted without its store has none); disabled, the retained pictures are emptied."""
        for bank in self.banks:
            for camera in bank.camera_names():
                if not self.enabled:
                    # An empty retained payload deletes the picture the broker kept.
                    await client.publish(self.topics.camera_image(camera), b"", qos=1, retain=True)
                    continue
                if camera in self._pending:
                    continue  # a newer one is on its way
                path = bank.latest(camera)
                data = None if path is None else await asyncio.to_thread(_read, path)
                if data:
                    await client.publish(self.topics.camera_image(camera), data, qos=1, retain=True)


def _read(path: Path) -> bytes | None:
    try:
        with path.open("rb") as f:
            data = f.read(MAX_IMAGE_BYTES + 1)
    except OSError:
        return None
    return data if len(data) <= MAX_IMAGE_BYTES else None

"""Snapshots on disk: ``<workspace>/snapshots/<camera>/``, a bounded count per camera.

A snapshot's bytes go to a file and to the one model request that asked for it; never into
memory, history or logs. The oldest files beyond ``keep`` are removed after each write.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Snapshot", "SnapshotStore"]


@dataclass(frozen=True, slots=True)
class Snapshot:
    """One picture taken: its JPEG bytes and where it was stored.

    Attributes:
        camera: The camera's name.
        jpeg: The JPEG bytes (hand them on; never log or store them elsewhere).
        path: The file in the workspace.
        width: Pixels.
        height: Pixels.
        time: Unix seconds.
    """

    camera: str
    jpeg: bytes
    path: Path
    width: int
    height: int
    time: float


class SnapshotStore:
    """Writes and lists one camera's snapshots (blocking: call it on the camera's thread).

    Args:
        root: The ``snapshots`` directory (each camera gets a subdirectory).
        camera: The camera's name.
        keep: Files kept; older ones are removed.
    """

    def __init__(self, root: Path, camera: str, keep: int) -> None:
        self.directory = root / camera
        self.camera = camera
        self.keep = keep
        self._serial = 0

    def write(self, data: bytes, when: float) -> Path:
        """Store ``data`` as the newest snapshot and drop the oldest beyond ``keep``."""
        self.directory.mkdir(parents=True, exist_ok=True)
        self._serial += 1
        stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(when))
        path = self.directory / f"{self.camera}-{stamp}-{self._serial:04d}.jpg"
        tmp = path.with_suffix(".part")
        tmp.write_bytes(data)
        os.replace(tmp, path)  # a reader never sees half a picture
        for old in self.files()[: -self.keep]:
            old.unlink(missing_ok=True)
        return path

    def files(self) -> list[Path]:
        """The stored snapshots, oldest first."""
        if not self.directory.is_dir():
            return []
        return sorted(self.directory.glob("*.jpg"), key=lambda p: (p.stat().st_mtime_ns, p.name))

    def latest(self) -> Path | None:
        """The newest snapshot, or None."""
        files = self.files()
        return files[-1] if files else None

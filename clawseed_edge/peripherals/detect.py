"""Which board this is: a Raspberry Pi from ``/proc/device-tree/model``, Nucleos from USB ids.

Everything is read below a root directory (``/`` by default), so tests point it at a fake
``/proc`` + ``/sys`` + ``/dev`` tree and run the same code as on a Pi. Nothing here opens a
device: only small files under ``/proc`` and ``/sys`` are read, and directories listed.

The Pi is matched by the ``dt_model`` prefix of the board files (the longest prefix wins:
"Raspberry Pi 3 Model B Plus" before "Raspberry Pi 3 Model B"). A Nucleo is found by its
ST-LINK's USB ``idVendor``/``idProduct`` under ``/sys/bus/usb/devices``; every NUCLEO-64 has the
same ST-LINK, so the ids say "a Nucleo", not which one: :attr:`UsbBoard.candidates` lists the
board ids those ids fit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .boards import BoardRegistry, BoardSpec, default_registry

__all__ = [
    "DetectedBoards",
    "UsbBoard",
    "detect_boards",
    "match_pi",
    "memory_total_mb",
    "pi_model",
    "usb_boards",
]

#: Bounds on what is read: a model string, one id file, the USB devices listed.
_MAX_FILE_BYTES = 4096
_MAX_USB_DEVICES = 256


@dataclass(frozen=True, slots=True)
class UsbBoard:
    """A USB device whose ``VID:PID`` belongs to a board file (a Nucleo's ST-LINK)."""

    usb: str  # "0483:374B"
    sysfs_name: str  # "1-1.2"
    candidates: tuple[str, ...]  # board ids with these USB ids
    product: str = ""


@dataclass(frozen=True, slots=True)
class DetectedBoards:
    """What :func:`detect_boards` found.

    Attributes:
        model: The device-tree model string (``Raspberry Pi 5 Model B Rev 1.0``), or None.
        pi: The Pi board file that model matches, or None (not a Pi, or a Pi we have no file
            for: :attr:`model` is set then).
        usb: Boards on USB (Nucleos).
        memory_mb: Total RAM from ``/proc/meminfo`` (None when unreadable).
    """

    model: str | None = None
    pi: BoardSpec | None = None
    usb: tuple[UsbBoard, ...] = field(default_factory=tuple)
    memory_mb: int | None = None

    @property
    def is_pi(self) -> bool:
        """A Raspberry Pi (known to us or not)."""
        return self.pi is not None or (self.model or "").startswith("Raspberry Pi")


def _read_small(path: Path) -> str | None:
    """The text of a small file (NULs stripped, bounded), or None when it cannot be read."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(_MAX_FILE_BYTES)
    except OSError:
        return None
    return data.replace(b"\x00", b"").decode("utf-8", "replace").strip()


def pi_model(root: Path = Path("/")) -> str | None:
    """The device-tree model string (``/proc/device-tree/model``), or None where there is none."""
    return _read_small(root / "proc/device-tree/model") or None


def memory_total_mb(root: Path = Path("/")) -> int | None:
    """``MemTotal`` of ``/proc/meminfo`` in MiB, or None where it cannot be read."""
    text = _read_small(root / "proc/meminfo")
    for line in (text or "").splitlines():
        if line.startswith("MemTotal:"):
            parts = line.split()
            if len(parts) >= 2 and parts[1].isdigit():
                return int(parts[1]) // 1024
    return None


def match_pi(model: str, boards: list[BoardSpec]) -> BoardSpec | None:
    """The Pi board whose ``dt_model`` is the longest prefix of ``model``."""
    best: BoardSpec | None = None
    for board in boards:
        prefix = board.dt_model
        if prefix and model.startswith(prefix):
            if best is None or len(prefix) > len(best.dt_model or ""):
                best = board
    return best


def usb_boards(root: Path = Path("/"), registry: BoardRegistry | None = None) -> list[UsbBoard]:
    """USB devices under ``/sys/bus/usb/devices`` whose ids a board file lists."""
    boards = (registry or default_registry()).list()
    by_id: dict[str, list[str]] = {}
    for board in boards:
        for usb in board.usb:
            by_id.setdefault(usb.upper(), []).append(board.id)
    base = root / "sys/bus/usb/devices"
    try:
        entries = sorted(base.iterdir())[:_MAX_USB_DEVICES]
    except OSError:
        return []
    found = []
    for entry in entries:
        vendor = _read_small(entry / "idVendor")
        product_id = _read_small(entry / "idProduct")
        if not vendor or not product_id:
            continue  # an interface, not a device
        usb = f"{vendor}:{product_id}".upper()
        if usb in by_id:
            product = _read_small(entry / "product") or ""
            found.append(UsbBoard(usb, entry.name, tuple(by_id[usb]), product))
    return found


def detect_boards(root: Path = Path("/"), registry: BoardRegistry | None = None) -> DetectedBoards:
    """The Pi this runs on (if any), the boards on its USB, and its RAM. Never raises."""
    registry = registry or default_registry()
    model = pi_model(root)
    pis = [b for b in registry.list() if b.family == "pi"]
    pi = match_pi(model, pis) if model else None
    return DetectedBoards(
        model=model,
        pi=pi,
        usb=tuple(usb_boards(root, registry)),
        memory_mb=memory_total_mb(root),
    )

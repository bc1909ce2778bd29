"""What the doctor's checks see and give: the :class:`Machine`, the context, a result.

The machine is seen through a root directory (``/``; a fake ``/proc`` + ``/sys`` + ``/dev`` tree
in tests), the user's groups, whether a device node is usable and whether a module is
installed: every check runs the same code against a fake tree as on a Pi.
"""

from __future__ import annotations

import getpass
import importlib.util
import os
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from clawseed_edge.api.urls import redact_url
from clawseed_edge.peripherals.detect import DetectedBoards

from .file import LoadedConfig

__all__ = ["Check", "CheckResult", "DoctorContext", "Machine"]


@dataclass(frozen=True, slots=True)
class CheckResult:
    """One check's outcome: ``status`` (ok/warn/fail/skip), what was found, how to fix it."""

    name: str
    status: str
    summary: str
    fix: str = ""

    def __post_init__(self) -> None:
        # A check quotes the configured addresses (base_url, the broker): never a password.
        object.__setattr__(self, "summary", redact_url(self.summary))

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


def _process_groups() -> frozenset[str]:
    import grp

    names = set()
    for gid in {*os.getgroups(), os.getegid()}:
        try:
            names.add(grp.getgrgid(gid).gr_name)
        except KeyError:
            continue
    return frozenset(names)


def _usable(path: Path) -> bool:
    return os.access(path, os.R_OK | os.W_OK)


def _has_module(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


@dataclass(slots=True)
class Machine:
    """The machine as the checks see it.

    Attributes:
        root: Where ``/proc``, ``/sys``, ``/dev`` and ``/etc/group`` are read (``/``).
        user: The user the checks speak of (the one running doctor).
        groups: The groups this process has (None: asked from the OS).
        usable: Whether a device node can be opened for reading and writing.
        is_root: Running as root (device permissions do not apply).
        has_module: Whether a Python module is installed (lgpio), without importing it.
    """

    root: Path = Path("/")
    user: str = field(default_factory=getpass.getuser)
    groups: frozenset[str] | None = None
    usable: Callable[[Path], bool] = _usable
    is_root: bool = field(default_factory=lambda: os.geteuid() == 0)
    has_module: Callable[[str], bool] = _has_module

    def group_names(self) -> frozenset[str]:
        if self.groups is None:
            self.groups = _process_groups()
        return self.groups

    def listed_in_group(self, group: str) -> bool:
        """Whether ``/etc/group`` lists the user in ``group`` (added, maybe not logged in yet)."""
        try:
            text = (self.root / "etc/group").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return False
        for line in text.splitlines()[:10000]:
            parts = line.split(":")
            if len(parts) >= 4 and parts[0] == group:
                return self.user in parts[3].split(",")
        return False

    def nodes(self, pattern: str) -> list[Path]:
        """Paths under the root matching ``pattern`` (``dev/gpiochip*``), sorted, at most 64."""
        return sorted(self.root.glob(pattern))[:64]

    def show(self, path: Path) -> str:
        """``path`` as it is on the machine (``/dev/i2c-1``, not the fake root's path)."""
        return "/" + str(path.relative_to(self.root))


@dataclass(slots=True)
class DoctorContext:
    """What every check gets: the machine, the config (or why it did not load), the boards."""

    machine: Machine
    loaded: LoadedConfig | None
    config_error: str | None = None
    detected: DetectedBoards = field(default_factory=DetectedBoards)


Check = Callable[
    [DoctorContext], "CheckResult | list[CheckResult] | Awaitable[CheckResult | list[CheckResult]]"
]

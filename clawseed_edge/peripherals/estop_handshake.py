"""The file through which ``clawseed-edge estop --pid`` knows a process handles its signal.

A process that installs the estop handler (:func:`~.safety.install_signal_handlers`) writes
``$CLAWSEED_HOME/run/estop-<pid>.json``: its pid, its start time (field 22 of
``/proc/<pid>/stat``, so a recycled pid never matches) and how many estops it has applied, with
the failures of the last one. ``estop --pid`` signals only a process whose command line is
clawseed-edge's and whose handshake matches it, then waits for the count to rise: it reports what
the process did, not what it hoped. Sending SIGUSR1 to anything else would kill it (the default
action of SIGUSR1 is to terminate).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from pathlib import Path
from typing import Any

import msgspec

__all__ = [
    "EstopHandshake",
    "HandshakeRecord",
    "clawseed_home",
    "handshake_path",
    "is_clawseed_cmdline",
    "process_cmdline",
    "process_start_time",
    "read_handshake",
]

log = logging.getLogger(__name__)

HOME_ENV = "CLAWSEED_HOME"


def clawseed_home() -> Path:
    """``$CLAWSEED_HOME``, else ``~/.clawseed-edge`` (the rule of ``config.paths``, which this
    layer may not import; a test keeps the two the same)."""
    value = os.environ.get(HOME_ENV)
    return Path(value).expanduser() if value else Path.home() / ".clawseed-edge"


def handshake_path(pid: int, home: str | os.PathLike[str] | None = None) -> Path:
    """Where process ``pid`` keeps its handshake under ``home`` (default: :func:`clawseed_home`)."""
    base = Path(home) if home is not None else clawseed_home()
    return base / "run" / f"estop-{pid}.json"


def process_start_time(pid: int) -> str | None:
    """The start time of ``pid`` in clock ticks since boot (``/proc``), or None if unknown."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces or ')': cut after the last.
    fields = stat.rpartition(")")[2].split()
    return fields[19] if len(fields) > 19 else None


def process_cmdline(pid: int) -> list[str] | None:
    """The arguments of ``pid`` (``/proc/<pid>/cmdline``), or None if it cannot be read."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    return [a.decode(errors="replace") for a in raw.split(b"\0") if a]


def is_clawseed_cmdline(args: list[str]) -> bool:
    """Whether a command line runs clawseed-edge (the console script or the package)."""
    return any("clawseed-edge" in a or "clawseed_edge" in a for a in args)


class HandshakeRecord(msgspec.Struct, frozen=True):
    """What a process wrote: who it is and how its estops went."""

    pid: int
    start: str | None
    estops: int
    failures: tuple[str, ...]


def read_handshake(pid: int, home: str | os.PathLike[str] | None = None) -> HandshakeRecord | None:
    """The handshake of ``pid``, or None when there is none (or it cannot be read)."""
    try:
        doc: Any = json.loads(handshake_path(pid, home).read_text(encoding="utf-8"))
        return HandshakeRecord(
            pid=int(doc["pid"]),
            start=doc.get("start"),
            estops=int(doc.get("estops", 0)),
            failures=tuple(str(f) for f in doc.get("failures", ())),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


class EstopHandshake:
    """This process's handshake file: written at install, updated per estop, removed at exit.

    Writing is best effort: when ``$CLAWSEED_HOME`` is not writable the process still handles
    its signals, and ``estop --pid`` refuses to signal it (saying why) rather than guess.
    """

    def __init__(self, home: str | os.PathLike[str] | None = None) -> None:
        self.pid = os.getpid()
        self.path = handshake_path(self.pid, home)
        self._start = process_start_time(self.pid)
        self._estops = 0
        self._written = False

    def write(self, failures: list[str] | None = None) -> None:
        """Write (or rewrite) the file; ``failures`` marks one more estop done."""
        if failures is not None:
            self._estops += 1
        doc = {
            "pid": self.pid,
            "start": self._start,
            "estops": self._estops,
            "failures": list(failures or ()),
        }
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps(doc), encoding="utf-8")
            # Readers see the old or the new file, never half of one.
            os.replace(tmp, self.path)
            self._written = True
        except OSError as exc:
            log.warning(
                "cannot write %s (%s): `estop --pid` will not signal this process",
                self.path,
                exc.strerror,
            )

    def remove(self) -> None:
        """Delete the file (the handler is gone). Idempotent."""
        if self._written:
            with contextlib.suppress(OSError):
                self.path.unlink()
            self._written = False

"""The Telegram users paired with ``/pair <code>``, kept in ``telegram-paired.json`` (mode 0600)."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

__all__ = ["read_paired", "write_paired"]

log = logging.getLogger("clawseed_edge.channels.telegram.channel")


def read_paired(path: Path | None) -> frozenset[int]:
    """The user ids paired before (a missing or unreadable file: none, with a log line)."""
    if path is None or not path.exists():
        return frozenset()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return frozenset(int(x) for x in data.get("users", [])[:1000])
    except (OSError, ValueError, TypeError, AttributeError):
        log.warning("Telegram: %s is unreadable; no paired users were loaded", path)
        return frozenset()


def write_paired(path: Path | None, users: frozenset[int]) -> None:
    if path is None:
        return
    try:
        tmp = path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump({"users": sorted(users)}, f)
        os.replace(tmp, path)
    except OSError:
        log.exception("Telegram: could not save the paired users to %s", path)

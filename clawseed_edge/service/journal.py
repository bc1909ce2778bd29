"""Log lines for journald: one line per event, each with its syslog priority.

When stderr is connected to the journal (systemd sets ``JOURNAL_STREAM`` to the ``device:inode``
of that stream), each line starts with ``<N>``, the syslog priority journald reads and strips
(``journalctl -p warning`` then works); elsewhere the line keeps its ``LEVEL`` word. A record
that spans several lines (a traceback) is folded into one, so one event is one journal entry.
Secrets are scrubbed before the formatter runs (the redacting filter on the root handler,
installed when the runtime is assembled).
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping
from typing import IO

__all__ = ["JournalFormatter", "stream_is_journal", "use_journal_format"]

#: Python logging level -> syslog priority (sd-daemon.h: SD_ERR 3, SD_WARNING 4, SD_INFO 6 ...).
_PRIORITY = ((logging.CRITICAL, 2), (logging.ERROR, 3), (logging.WARNING, 4), (logging.INFO, 6))


def priority(levelno: int) -> int:
    """The syslog priority of a logging level (DEBUG and below: 7)."""
    return next((p for level, p in _PRIORITY if levelno >= level), 7)


def stream_is_journal(
    stream: IO[str] | None = None, environ: Mapping[str, str] | None = None
) -> bool:
    """Whether ``stream`` (default stderr) is the journal stream systemd named."""
    env = os.environ if environ is None else environ
    dev, _, ino = env.get("JOURNAL_STREAM", "").partition(":")
    if not (dev.isdigit() and ino.isdigit()):
        return False
    try:
        st = os.fstat((stream or sys.stderr).fileno())
    except (OSError, ValueError, AttributeError):
        return False
    return (st.st_dev, st.st_ino) == (int(dev), int(ino))


class JournalFormatter(logging.Formatter):
    """``<4>clawseed_edge.run: message`` (journal) or ``WARNING clawseed_edge.run: message``."""

    def __init__(self, *, journal: bool) -> None:
        super().__init__(
            "%(name)s: %(message)s" if journal else "%(levelname)s %(name)s: %(message)s"
        )
        self.journal = journal

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        text = " | ".join(line for line in text.splitlines() if line.strip())
        return f"<{priority(record.levelno)}>{text}" if self.journal else text


def use_journal_format(environ: Mapping[str, str] | None = None) -> bool:
    """Give the root logger's stderr handlers a :class:`JournalFormatter`; returns ``journal``."""
    journal = stream_is_journal(environ=environ)
    for handler in logging.getLogger().handlers:
        if isinstance(handler, logging.StreamHandler) and handler.stream in (
            sys.stderr,
            sys.stdout,
        ):
            handler.setFormatter(JournalFormatter(journal=journal))
    return journal

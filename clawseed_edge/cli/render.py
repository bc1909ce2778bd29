"""Printing turn events on a terminal: the answer on stdout, everything else on stderr."""

from __future__ import annotations

import json
import sys
from typing import TextIO

from clawseed_edge.api import (
    AbortedEvent,
    ApprovalRequestEvent,
    ChunkEvent,
    DoneEvent,
    ErrorEvent,
    ThinkingEvent,
    ToolCallEvent,
    ToolResultEvent,
    TurnEvent,
    for_people,
)

__all__ = ["EventPrinter", "counted"]


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``1 output``, ``2 outputs`` (``plural`` for irregular nouns: ``entry``/``entries``)."""
    return f"{n} {noun if n == 1 else (plural or noun + 's')}"


def _outcome(error: str) -> str:
    """How a call that did not succeed ended: ``denied``/``refused`` (by a hook such as the
    SecurityPolicy, which starts its reason with that word) or ``failed`` (the tool's error)."""
    first = error.split(" ", 1)[0].lower()
    return first if first in {"denied", "refused"} else "failed"


def _short(value: object, limit: int = 200) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class EventPrinter:
    """Prints one turn's events; ``exit_code`` tells how the turn ended.

    The answer text goes to ``out``; tool calls, results, thinking (when asked for) and errors
    go to ``err`` so that ``clawseed-edge agent -m ... > answer.txt`` captures only the answer.
    With ``json_lines`` every event is one JSON object per line on ``out`` instead.
    """

    def __init__(
        self,
        out: TextIO | None = None,
        err: TextIO | None = None,
        *,
        show_thinking: bool = False,
        json_lines: bool = False,
    ) -> None:
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.show_thinking = show_thinking
        self.json_lines = json_lines
        self.exit_code = 0
        self._printed_text = False

    def handle(self, event: TurnEvent) -> None:
        """Print one event."""
        if self.json_lines:
            self.out.write(json.dumps(event.to_dict(), ensure_ascii=False) + "\n")
            self.out.flush()
            self._track(event)
            return
        if isinstance(event, ChunkEvent):
            self.out.write(event.text)
            self.out.flush()
            self._printed_text = self._printed_text or bool(event.text)
        elif isinstance(event, ThinkingEvent):
            if self.show_thinking:
                self.err.write(event.text)
        elif isinstance(event, ToolCallEvent):
            args = _short(dict(event.call.arguments))
            self.err.write(f"-> {event.call.name} {args}\n")
        elif isinstance(event, ToolResultEvent):
            r = event.result
            took = f"{event.duration_ms:.1f} ms"
            if r.success:
                self.err.write(f"<- ok ({took}): {_short(for_people(r.output))}\n")
            else:
                error = for_people(r.error or "")
                self.err.write(f"<- {_outcome(error)} ({took}): {_short(error)}\n")
        elif isinstance(event, ApprovalRequestEvent):
            pass  # the terminal approver asks the question itself (or explains its refusal)
        elif isinstance(event, DoneEvent):
            if not self._printed_text and event.text:
                self.out.write(event.text)
            self.out.write("\n")
            self.out.flush()
        elif isinstance(event, AbortedEvent):
            self.err.write(f"aborted: {event.reason}\n")
        elif isinstance(event, ErrorEvent):
            if self._printed_text:
                self.out.write("\n")
            self.err.write(f"error: {event.message}\n")
        self.err.flush()
        self._track(event)

    def _track(self, event: TurnEvent) -> None:
        if isinstance(event, ErrorEvent):
            self.exit_code = 1
        elif isinstance(event, AbortedEvent):
            self.exit_code = 130

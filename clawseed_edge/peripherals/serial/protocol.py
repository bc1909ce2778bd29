"""The host side of the JSON-lines protocol, as a pure object: bytes in, events out.

No port, no thread, no clock: :class:`SerialProtocol` encodes requests with fresh ids and turns
whatever the board sends into :class:`Reply`, :class:`BoardEvent`, :class:`Noise` and
:class:`ReplPrompt` items. The driver (:mod:`.board`) does the I/O and the waiting; the tests
drive this object with byte strings.

Resynchronisation: the protocol is line-framed, so after garbage (line noise while the cable
settles, a half line from before a reset) the next newline ends the damage; a line that is not
a JSON object becomes :class:`Noise`. A board that fell back to the MicroPython REPL (its
banner, then a ``>>> `` prompt with no newline after it) yields :class:`ReplPrompt`, so the
driver can restart the firmware instead of waiting for replies that will never come.

Validation: a JSON object that is not a well-formed reply or event (an edge whose value is not
0 or 1, a number that is not finite, an error without a code) becomes :class:`Malformed`, which
the driver logs and drops; a malformed reply whose id is readable still fails its request at
once (code ``bad_reply``) instead of leaving it to time out. Nothing the board sends raises.

Bounds: a line longer than :attr:`SerialProtocol.max_line` bytes is dropped whole (one
:class:`Noise` item says so); ids run 1..2**31-1 and wrap.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "MAX_ID",
    "BoardEvent",
    "Malformed",
    "Noise",
    "ReplPrompt",
    "Reply",
    "SerialProtocol",
]

MAX_ID = 2**31 - 1
_PROMPTS = (b">>> ", b"raw REPL; CTRL-B to exit\r\n>")


@dataclass(frozen=True, slots=True)
class Reply:
    """The board's answer to request ``id`` (None: it could not read the request's id)."""

    id: int | None
    ok: bool
    result: Any = None
    code: str = ""
    message: str = ""


@dataclass(frozen=True, slots=True)
class BoardEvent:
    """An unsolicited line: ``{"event": name, ...}`` (an input edge, the watchdog firing)."""

    name: str
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Noise:
    """A line that is not protocol (garbage, a REPL banner, a traceback), shown for debugging."""

    text: str


@dataclass(frozen=True, slots=True)
class ReplPrompt:
    """The board is at the MicroPython REPL prompt: the firmware is not running."""

    prompt: str


@dataclass(frozen=True, slots=True)
class Malformed:
    """A JSON object shaped like protocol that breaks its rules; dropped with a log line."""

    text: str
    reason: str


Item = Reply | BoardEvent | Noise | ReplPrompt | Malformed


class _NotFinite(ValueError):
    pass


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e999 parses as inf
        raise _NotFinite(f"number {text} is not finite")
    return value


def _no_constant(name: str) -> float:
    raise _NotFinite(f"{name} is not a JSON number")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _event_problem(name: Any, data: dict[str, Any]) -> str:
    """Why an event breaks the firmware's shapes ("" when it is fine; unknown events pass)."""
    if not isinstance(name, str) or not name:
        return "the event name is not a string"
    if name == "edge":
        if not isinstance(data.get("pin"), str):
            return "an edge event's pin is not a pin name"
        if not _is_int(data.get("value")) or data["value"] not in (0, 1):
            return f"an edge event's value {data.get('value')!r} is not 0 or 1"
    elif name == "watchdog":
        if not _is_int(data.get("period_ms")):
            return "a watchdog event's period_ms is not an integer"
        safe = data.get("safe")
        if not isinstance(safe, list) or not all(isinstance(p, str) for p in safe):
            return "a watchdog event's safe is not a list of pin names"
    return ""


class SerialProtocol:
    """Encode requests, decode the board's byte stream.

    Args:
        max_line: Longest accepted line in bytes (a reply is far shorter; the firmware's own
            request limit is 512 bytes).
    """

    def __init__(self, max_line: int = 4096) -> None:
        self.max_line = max_line
        self._buf = bytearray()
        self._dropping = False
        self._next_id = 0

    def next_id(self) -> int:
        """A fresh request id (1..MAX_ID, wrapping)."""
        self._next_id = self._next_id % MAX_ID + 1
        return self._next_id

    def encode(self, op: str, args: dict[str, Any] | None = None) -> tuple[int, bytes]:
        """(id, the request line with its newline) for ``op`` with ``args``."""
        rid = self.next_id()
        line = json.dumps({"id": rid, "op": op, "args": args or {}}, separators=(",", ":"))
        return rid, line.encode() + b"\n"

    def reset(self) -> None:
        """Forget a partial line (after a reconnect: its start came from another session)."""
        self._buf.clear()
        self._dropping = False

    def feed(self, data: bytes) -> list[Item]:
        """Take received bytes; return the items of every line they complete."""
        items: list[Item] = []
        for byte in data:
            if byte == 0x0A:  # \n ends a line; \r is stripped with the whitespace
                if self._dropping:
                    self._dropping = False
                    items.append(Noise(f"dropped a line longer than {self.max_line} bytes"))
                elif self._buf:
                    items.append(self._decode(bytes(self._buf)))
                self._buf.clear()
                continue
            if self._dropping:
                continue
            if len(self._buf) >= self.max_line:
                self._buf.clear()
                self._dropping = True
                continue
            self._buf.append(byte)
        # A prompt has no newline after it: look at the unfinished line.
        for prompt in _PROMPTS:
            if self._buf.endswith(prompt):
                items.append(ReplPrompt(prompt.decode().strip()))
                self._buf.clear()
                break
        return items

    @staticmethod
    def _decode(raw: bytes) -> Item:
        text = raw.decode("utf-8", errors="replace").strip()
        if not text.startswith("{"):
            return Noise(text[:200])
        try:
            obj = json.loads(text, parse_float=_finite_float, parse_constant=_no_constant)
        except _NotFinite as exc:
            return Malformed(text[:200], str(exc))
        except ValueError:
            return Noise(text[:200])
        if not isinstance(obj, dict):
            return Noise(text[:200])
        if "event" in obj:
            name = obj.pop("event")
            problem = _event_problem(name, obj)
            if problem:
                return Malformed(text[:200], problem)
            return BoardEvent(name, obj)
        return SerialProtocol._reply(obj, text)

    @staticmethod
    def _reply(obj: dict[str, Any], text: str) -> Item:
        raw_id = obj.get("id")
        rid: int | None = None
        if isinstance(raw_id, int) and not isinstance(raw_id, bool) and 0 <= raw_id <= MAX_ID:
            rid = raw_id
        ok = obj.get("ok")
        if ok is True:
            return Reply(rid, True, obj.get("result"))
        error = obj.get("error")
        if ok is False and isinstance(error, dict):
            code, message = error.get("code"), error.get("message")
            if isinstance(code, str) and isinstance(message, str):
                return Reply(rid, False, None, code, message)
        if "ok" not in obj:
            return Noise(text[:200])  # not a reply: a REPL echoing a request line, say
        if rid is None:
            return Malformed(text[:200], "a reply without a usable id, ok and error")
        # The request is known: fail it now with what the board sent, rather than time out.
        return Reply(rid, False, None, "bad_reply", f"malformed reply from the board: {text[:200]}")

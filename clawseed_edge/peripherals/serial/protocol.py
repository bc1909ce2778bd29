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

Bounds: a line longer than :attr:`SerialProtocol.max_line` bytes is dropped whole (one
:class:`Noise` item says so); ids run 1..2**31-1 and wrap.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "MAX_ID",
    "BoardEvent",
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


Item = Reply | BoardEvent | Noise | ReplPrompt


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
            obj = json.loads(text)
        except ValueError:
            return Noise(text[:200])
        if not isinstance(obj, dict):
            return Noise(text[:200])
        if "event" in obj:
            name = obj.pop("event")
            return BoardEvent(str(name), obj)
        rid = obj.get("id")
        if not isinstance(rid, int) or isinstance(rid, bool):
            rid = None
        if obj.get("ok") is True:
            return Reply(rid, True, obj.get("result"))
        error = obj.get("error")
        if obj.get("ok") is False and isinstance(error, dict):
            return Reply(
                rid, False, None, str(error.get("code", "")), str(error.get("message", ""))
            )
        return Noise(text[:200])

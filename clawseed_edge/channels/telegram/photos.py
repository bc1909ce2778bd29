"""Photos the bot sends: a stored snapshot uploaded with ``sendPhoto``, bounded in size.

Two callers share :func:`send_photo`: an automation's notification that attaches a snapshot,
and a chat turn whose tools took pictures (:class:`TurnPhotos`, sent after the answer). A
turn's picture is found again in its camera's own snapshot store, by camera and file name
(never by a path a result carries), read on a thread, handed to the Bot API client and never
logged. A photo that cannot be sent becomes a line of text in the chat saying why.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clawseed_edge.agent.pictures import stored_picture

from .outbox import Outbox

__all__ = [
    "MAX_PHOTO_BYTES",
    "MAX_TURN_PHOTOS",
    "TurnPhotos",
    "find_snapshot",
    "read_photo",
    "send_photo",
]

log = logging.getLogger(__name__)

#: Telegram's limit for an uploaded photo is 10 MB.
MAX_PHOTO_BYTES = 10_000_000
#: Photos one turn sends; the pictures beyond are named in a line of text.
MAX_TURN_PHOTOS = 4
#: Pictures beyond ``MAX_TURN_PHOTOS`` named in that line (the rest are counted).
MAX_NAMED = 10


@dataclass(frozen=True, slots=True)
class Picture:
    """A picture a tool took: its camera and its file in the camera's snapshot store."""

    camera: str
    file: str

    def caption(self) -> str:
        return f"Picture from camera {self.camera}"

    def where(self) -> str:
        return f"snapshots/{self.camera}/{self.file}"


class TurnPhotos:
    """The pictures one turn's tools took, in order, to send when the turn ends."""

    def __init__(self) -> None:
        self.pictures: list[Picture] = []
        #: Pictures taken beyond ``MAX_TURN_PHOTOS``: the first ``MAX_NAMED`` named, all counted.
        self.named: list[Picture] = []
        self.more = 0

    def add(self, result: Any) -> None:
        """Keep the picture of a tool result, if it is a successful one that took one: its
        ``images`` are set and its ``data`` names the ``camera`` and the stored ``path``."""
        picture = _picture_of(result)
        if picture is None:
            return
        if len(self.pictures) < MAX_TURN_PHOTOS:
            self.pictures.append(picture)
            return
        self.more += 1
        if len(self.named) < MAX_NAMED:
            self.named.append(picture)

    def rest_line(self) -> str:
        """The line naming the pictures not sent ("" when every one was)."""
        if not self.more:
            return ""
        names = ", ".join(p.where() for p in self.named)
        unnamed = self.more - len(self.named)
        tail = f" and {unnamed} more" if unnamed else ""
        return (
            f"{self.more} more picture(s) taken in this turn (at most {MAX_TURN_PHOTOS} are sent "
            f"per answer), kept on the device as {names}{tail}."
        )

    async def send(self, outbox: Outbox, chat_id: int, peripherals: Sequence[Any]) -> None:
        """Send each picture (with its camera as caption), then the line naming the rest."""
        for picture in self.pictures:
            path = await find_snapshot(peripherals, picture.camera, picture.file)
            if path is None:
                await outbox.send_now(
                    chat_id,
                    f"{picture.caption()}: not sent, the camera no longer keeps "
                    f"{picture.where()} (it keeps its newest keep_snapshots pictures).",
                )
                continue
            await send_photo(outbox, chat_id, path, picture.caption())
        if self.more:
            await outbox.send_now(chat_id, self.rest_line())


async def find_snapshot(peripherals: Sequence[Any], camera: str, file: str) -> Path | None:
    """The stored file ``file`` of ``camera``, from the camera's own snapshot store (a name,
    never a path), or None when no camera of that name keeps it."""
    for peripheral in peripherals:
        names = getattr(peripheral, "camera_names", None)
        stored = getattr(peripheral, "stored", None)
        if callable(names) and callable(stored) and camera in names():
            path = await asyncio.to_thread(stored, camera, file)
            return path if isinstance(path, Path) else None
    return None


async def send_photo(outbox: Outbox, chat_id: int, path: Path, caption: str) -> bool:
    """Upload the JPEG at ``path`` with its caption; whether it went through.

    A photo that cannot be read (gone, over 10 MB) or that Telegram did not take becomes a
    text message: the caption, and why the photo is missing.
    """
    try:
        photo = await asyncio.to_thread(read_photo, path)
    except OSError as exc:
        why = "the file is gone" if isinstance(exc, FileNotFoundError) else str(exc)
        log.warning("telegram: photo %s not sent (%s); sending the text", path.name, why)
        await outbox.send_now(chat_id, _not_sent(caption, why))
        return False
    sent, why = await outbox.attempt(outbox.api.send_photo, chat_id, photo, caption)
    if sent is None:
        await outbox.send_now(chat_id, _not_sent(caption, why))
        return False
    return True


def read_photo(path: Path) -> bytes:
    """The file's bytes; OSError when it is gone or over ``MAX_PHOTO_BYTES``."""
    with path.open("rb") as f:
        data = f.read(MAX_PHOTO_BYTES + 1)
    if len(data) > MAX_PHOTO_BYTES:
        raise OSError(f"the photo is over Telegram's {MAX_PHOTO_BYTES:,} bytes")
    return data


def _not_sent(caption: str, why: str) -> str:
    line = f"(the photo could not be sent: {why})"
    return f"{caption}\n{line}" if caption else line


def _picture_of(result: Any) -> Picture | None:
    if not getattr(result, "success", False):
        return None
    picture = stored_picture(getattr(result, "images", ()), getattr(result, "data", None))
    return None if picture is None else Picture(*picture)

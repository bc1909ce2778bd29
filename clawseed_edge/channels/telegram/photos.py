"""Photos the bot sends: a stored snapshot uploaded with ``sendPhoto``, bounded in size.

The bytes are read from the file on a thread, handed to the Bot API client, and never logged.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from .outbox import Outbox

__all__ = ["MAX_PHOTO_BYTES", "read_photo", "send_photo"]

log = logging.getLogger(__name__)

#: Telegram's limit for an uploaded photo is 10 MB.
MAX_PHOTO_BYTES = 10_000_000


async def send_photo(outbox: Outbox, chat_id: int, path: Path, caption: str) -> None:
    """A snapshot with its caption; the text alone when the file is gone or too large."""
    try:
        photo = await asyncio.to_thread(read_photo, path)
    except OSError as exc:
        log.warning("telegram: photo %s not sent (%s); sending the text", path.name, exc)
        await outbox.send_now(chat_id, caption or "(a photo that could not be read)")
        return
    await outbox.call(outbox.api.send_photo, chat_id, photo, caption)


def read_photo(path: Path) -> bytes:
    """The file's bytes; OSError when it is gone or over ``MAX_PHOTO_BYTES``."""
    with path.open("rb") as f:
        data = f.read(MAX_PHOTO_BYTES + 1)
    if len(data) > MAX_PHOTO_BYTES:
        raise OSError(f"over {MAX_PHOTO_BYTES:,} bytes")
    return data

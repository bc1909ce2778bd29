"""The Telegram channel: a bot that long-polls the Bot API, so the device is reachable from
anywhere with no open port.

:class:`TelegramChannel` is the channel the service hosts (``[channels.telegram]``);
:class:`BotApi` the thin Bot API client on httpx it uses; the errors are in :mod:`.errors`.
Names are imported on first use.
"""

from __future__ import annotations

from clawseed_edge.api.lazy import lazy_face as _lazy_face

__all__ = [
    "BotApi",
    "TelegramApiError",
    "TelegramChannel",
    "TelegramConflict",
    "TelegramError",
    "TelegramRateLimited",
    "TelegramUnauthorized",
    "TelegramUnreachable",
    "split_message",
]

_WHERE = {
    "BotApi": "client",
    "TelegramChannel": "channel",
    "split_message": "text",
    **{
        name: "errors"
        for name in __all__
        if name.startswith("Telegram") and name != "TelegramChannel"
    },
}


__getattr__, __dir__ = _lazy_face(__name__, _WHERE, __all__)

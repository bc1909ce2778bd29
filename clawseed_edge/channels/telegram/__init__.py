"""The Telegram channel: a bot that long-polls the Bot API, so the device is reachable from
anywhere with no open port.

:class:`TelegramChannel` is the channel the service hosts (``[channels.telegram]``);
:class:`BotApi` the thin Bot API client on httpx it uses; the errors are in :mod:`.errors`.
Names are imported on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

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


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)

"""The ``telegram`` channel factory: :func:`telegram_channel` ``(settings, host)``.

It finds the bot token (the environment, then the secrets file), moves the users paired by an
older version (``telegram-paired.json``) into the host's one pairing store in state.db once,
and builds the :class:`~.channel.TelegramChannel` on the host's conversations, approvals,
emergency stop and state.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from .channel import TelegramChannel

if TYPE_CHECKING:
    from clawseed_edge.channels.host import ChannelHost
    from clawseed_edge.config.schema import TelegramSettings
    from clawseed_edge.state import PairingTokens

__all__ = ["OLD_PAIRED_FILE", "telegram_channel", "telegram_token"]

log = logging.getLogger(__name__)

#: Where versions before the one pairing store kept the users paired with ``/pair``.
OLD_PAIRED_FILE = "telegram-paired.json"


def telegram_token(settings: TelegramSettings, home: Path) -> str:
    """The bot token from the environment or the secrets file.

    Raises:
        ConfigInvalid: None is set; the message says how to set it.
    """
    from clawseed_edge.api import ConfigInvalid
    from clawseed_edge.config.secrets import lookup_secret

    name = settings.bot_token_env
    token = lookup_secret(name, home / "secrets")
    if not token:
        raise ConfigInvalid(
            f"the Telegram bot token is not set: run `clawseed-edge secrets set {name}` "
            "(the token from @BotFather), or set the environment variable "
            f"{name}; or turn the bot off with enabled = false",
            key="channels.telegram.bot_token_env",
        )
    return token


async def telegram_channel(settings: TelegramSettings, host: ChannelHost) -> TelegramChannel:
    """The Telegram bot on the host's parts (the ``telegram`` channel factory).

    Raises:
        ConfigInvalid: The bot token is not set.
    """
    from clawseed_edge.state import PairingTokens, ShownApprovals

    token = telegram_token(settings, host.home)
    pairings = PairingTokens(host.state) if host.state is not None else None
    if pairings is not None:
        await migrate_paired_file(host.home / OLD_PAIRED_FILE, pairings)
    channel = TelegramChannel(
        settings,
        token,
        conversations=host.conversations,
        broker=host.approvals,
        estop=host.emergency_stop,  # /stop latches it; /reset from an allowed user resets it
        status=host.status,
        pairings=pairings,
        shown=ShownApprovals(host.state, "telegram") if host.state is not None else None,
        peripherals=host.peripherals,
        **host.channel_options("telegram"),
    )
    if not settings.allowed_users:
        host.say(
            "warning: [channels.telegram] allowed_users is empty: the bot answers nobody "
            "but tells each person their user id"
        )
    host.say(f"telegram bot polling {settings.api_base}")
    return channel


async def migrate_paired_file(path: Path, pairings: PairingTokens) -> int:
    """Move the user ids of an older version's ``telegram-paired.json`` into the pairing
    store, then delete the file; returns how many moved (0: no file, or it is unreadable and
    stays for the owner to look at, with a log line)."""
    users = _read_old_paired(path)
    if users is None:
        return 0
    for user in users:
        await pairings.add_peer("telegram", str(user), f"Telegram user {user}")
    _remove(path)
    log.warning(
        "Telegram: moved %d paired user(s) from %s into state.db (`clawseed-edge pair --list`)",
        len(users),
        path.name,
    )
    return len(users)


def _read_old_paired(path: Path) -> list[int] | None:
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return [int(x) for x in data.get("users", [])[:1000]]
    except (OSError, ValueError, TypeError, AttributeError):
        log.warning("Telegram: %s is unreadable; its paired users were not moved", path)
        return None


def _remove(path: Path) -> None:
    path.unlink(missing_ok=True)

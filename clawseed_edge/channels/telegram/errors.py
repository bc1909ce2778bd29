"""The Telegram channel's errors.

::

    TelegramError (ClawseedError)
     ├── TelegramApiError        the Bot API answered ok=false (its description is the message)
     │    ├── TelegramUnauthorized (PermissionError)   401: the token is wrong or revoked
     │    ├── TelegramConflict                         409: another poller or a webhook
     │    └── TelegramRateLimited                      429: ``retry_after`` seconds to wait
     └── TelegramUnreachable (ConnectionError)         no answer: network, DNS, timeout

No message ever holds the bot token: the client names a method, never its URL.
"""

from __future__ import annotations

from clawseed_edge.api import ClawseedError

__all__ = [
    "TelegramApiError",
    "TelegramConflict",
    "TelegramError",
    "TelegramRateLimited",
    "TelegramUnauthorized",
    "TelegramUnreachable",
]


class TelegramError(ClawseedError):
    """Root of the Telegram channel's errors."""

    code = "telegram_error"


class TelegramApiError(TelegramError):
    """The Bot API refused a call; ``status`` is its ``error_code``, the message its
    ``description``."""

    code = "telegram_api_error"

    def __init__(self, method: str, status: int, description: str) -> None:
        super().__init__(f"Telegram {method} failed ({status}): {description}")
        self.method = method
        self.status = status
        self.description = description


class TelegramUnauthorized(TelegramApiError, PermissionError):
    """401: the bot token is wrong or was revoked (ask @BotFather for a new one)."""

    code = "telegram_unauthorized"


class TelegramConflict(TelegramApiError):
    """409: another process polls with this token, or a webhook is set."""

    code = "telegram_conflict"


class TelegramRateLimited(TelegramApiError):
    """429: wait ``retry_after`` seconds before the next call."""

    code = "telegram_rate_limited"

    def __init__(self, method: str, status: int, description: str, retry_after: float) -> None:
        super().__init__(method, status, description)
        self.retry_after = retry_after


class TelegramUnreachable(TelegramError, ConnectionError):
    """The Bot API did not answer (network down, DNS, timeout, a reply that is not JSON)."""

    code = "telegram_unreachable"

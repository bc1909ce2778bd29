"""Long-lived operational state that is not memory, in one small SQLite ``state.db``.

Pairing tokens live here (:class:`PairingTokens`), and the ledger of recent device actions
behind the hardware rate limits (:class:`DeviceLedger`) and scheduled jobs. Sensor history
(:class:`SensorHistory`) has its own ``history.db``. The
file sits in ``$CLAWSEED_HOME`` next to ``memory.db``; its schema is versioned (``PRAGMA
user_version``) and migrated forward on open. Depends on the api layer only.

::

    async with await StateDB.open(home / "state.db") as db:
        tokens = PairingTokens(db)
        issued = await tokens.issue("phone")
"""

from typing import TYPE_CHECKING, Any

from .asked import ShownApprovals
from .db import MIGRATIONS, StateDB
from .latch import LatchStore
from .ledger import DeviceLedger
from .pairing import IssuedToken, PairingTokens, TokenInfo

if TYPE_CHECKING:
    from .history import HistoryPoint, HistoryRetention, HistorySummary, SensorHistory

__all__ = [
    "MIGRATIONS",
    "DeviceLedger",
    "HistoryPoint",
    "HistoryRetention",
    "HistorySummary",
    "IssuedToken",
    "LatchStore",
    "PairingTokens",
    "SensorHistory",
    "ShownApprovals",
    "StateDB",
    "TokenInfo",
]


_HISTORY_NAMES = ("HistoryPoint", "HistoryRetention", "HistorySummary", "SensorHistory")


def __getattr__(name: str) -> Any:
    """The sensor history's names, imported on first use: a service whose sensors have no
    ``update_interval`` never opens ``history.db`` and does not load the module."""
    if name in _HISTORY_NAMES:
        from . import history

        return getattr(history, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

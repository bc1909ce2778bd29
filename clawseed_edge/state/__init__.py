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

from .db import MIGRATIONS, StateDB
from .history import HistoryPoint, HistoryRetention, HistorySummary, SensorHistory
from .ledger import DeviceLedger
from .pairing import IssuedToken, PairingTokens, TokenInfo

__all__ = [
    "MIGRATIONS",
    "DeviceLedger",
    "HistoryPoint",
    "HistoryRetention",
    "HistorySummary",
    "IssuedToken",
    "PairingTokens",
    "SensorHistory",
    "StateDB",
    "TokenInfo",
]

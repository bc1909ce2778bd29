"""Long-lived operational state that is not memory, in one small SQLite ``state.db``.

Pairing tokens live here now (:class:`PairingTokens`); scheduled jobs and the action ledger
will join them. The file sits in ``$CLAWSEED_HOME`` next to ``memory.db``; its schema is
versioned (``PRAGMA user_version``) and migrated forward on open. Depends on the api layer only.

::

    async with await StateDB.open(home / "state.db") as db:
        tokens = PairingTokens(db)
        issued = await tokens.issue("phone")
"""

from .db import MIGRATIONS, StateDB
from .pairing import IssuedToken, PairingTokens, TokenInfo

__all__ = ["MIGRATIONS", "IssuedToken", "PairingTokens", "StateDB", "TokenInfo"]

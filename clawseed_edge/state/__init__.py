"""Long-lived operational state in ``$CLAWSEED_HOME/state.db`` (not memory): for now the ledger
of recent device actions behind the hardware rate limits."""

from .ledger import DeviceLedger

__all__ = ["DeviceLedger"]

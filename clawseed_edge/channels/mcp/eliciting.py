"""Who approves an MCP client's call: the approver chain of :mod:`clawseed_edge.channels.approvals`.

The chain and the current call's asker live in the channels' approvals (the service builds its
approver there, with or without MCP); this module keeps the names the MCP server plugs in with.
"""

from __future__ import annotations

from clawseed_edge.channels.approvals import Ask, asking, current_asker
from clawseed_edge.channels.approvals import CallerFirstApprover as ElicitingApprover

__all__ = ["Ask", "ElicitingApprover", "asking", "current_asker"]

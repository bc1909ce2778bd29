"""The MCP server: the agent's hardware, sensor and enabled built-in tools for any MCP host.

``clawseed-edge mcp serve`` speaks the Model Context Protocol over stdio (what desktop hosts
launch). Every call goes through the SecurityPolicy as a model's call does
(:func:`~clawseed_edge.agent.tool_run.call_tool`): with no service running, through the
runtime it assembles itself (:class:`LocalBackend`); with the service running, through the
service's over its control socket (the command's bridge), so the hardware is never opened twice.

The protocol is our own (:mod:`.handlers` over :mod:`.stdio` and :mod:`.http`, on
:mod:`clawseed_edge.tools.mcp_wire`): no SDK, no pydantic (docs/mcp.md). The names below load
on first use: a service that only wraps its approver (:mod:`.eliciting`) does not load the
backend.
"""

import typing

from clawseed_edge.api.lazy import lazy_face as _lazy_face

if typing.TYPE_CHECKING:
    from .backend import LocalBackend, ToolBackend, annotations_for
    from .eliciting import Ask, ElicitingApprover, asking, current_asker

__all__ = [
    "Ask",
    "ElicitingApprover",
    "LocalBackend",
    "ToolBackend",
    "annotations_for",
    "asking",
    "current_asker",
]

_LAZY = {
    "Ask": ".eliciting",
    "ElicitingApprover": ".eliciting",
    "asking": ".eliciting",
    "current_asker": ".eliciting",
    "LocalBackend": ".backend",
    "ToolBackend": ".backend",
    "annotations_for": ".backend",
}


__getattr__, __dir__ = _lazy_face(__name__, _LAZY, __all__)

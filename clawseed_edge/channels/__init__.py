"""Every way in, and what the ways in share.

Each channel is a subpackage (:mod:`.gateway` first; later telegram, mqtt, mcp), a sibling that
never imports another. What they share sits here, one module each: the approvals broker
(:class:`ApprovalBroker`), the one emergency stop (:class:`EmergencyStop`), the hardware watch
fed by the peripherals' state feeds (:class:`HardwareWatch`), conversations
(:class:`Conversations`: sessions per channel and peer, agents built in one place) and
notifications (:class:`Notifications`: a scheduled job's answer or an alert, to the channels
that asked for it). docs/channels.md describes them.

Names are imported on first use.
"""

from __future__ import annotations

from clawseed_edge.api.lazy import lazy_face as _lazy_face

__all__ = [
    "ApprovalBroker",
    "Conversations",
    "EmergencyStop",
    "HardwareWatch",
    "Notifications",
]

_WHERE = {
    "ApprovalBroker": "approvals",
    "Conversations": "conversations",
    "EmergencyStop": "estop",
    "HardwareWatch": "watch",
    "Notifications": "notifications",
}


__getattr__, __dir__ = _lazy_face(__name__, _WHERE, __all__)

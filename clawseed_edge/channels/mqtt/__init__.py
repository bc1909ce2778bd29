"""The MQTT channel: Home Assistant discovery and commands, and the fleet of nodes, on the
user's broker (docs/mqtt.md).

:class:`MqttChannel` needs the ``mqtt`` extra (aiomqtt), imported only when it starts;
:mod:`.discovery` is pure data. Names are imported on first use.
"""

from __future__ import annotations

from clawseed_edge.api.lazy import lazy_face as _lazy_face

__all__ = ["MqttChannel", "Topics", "discovery_config"]

_WHERE = {"MqttChannel": "channel", "Topics": "discovery", "discovery_config": "discovery"}


__getattr__, __dir__ = _lazy_face(__name__, _WHERE, __all__)

"""The MQTT channel: Home Assistant discovery and commands, and the fleet of nodes, on the
user's broker (docs/mqtt.md).

:class:`MqttChannel` needs the ``mqtt`` extra (aiomqtt), imported only when it starts;
:mod:`.discovery` is pure data. Names are imported on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["MqttChannel", "Topics", "discovery_config"]

_WHERE = {"MqttChannel": "channel", "Topics": "discovery", "discovery_config": "discovery"}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)

"""The fleet on one broker: each node's retained description, and the view of all of them.

Every node publishes, retained, on ``clawseed/<node>/description`` what it has (devices with
their kinds and whether they need approval, sensors with their quantities) and, beside it,
its availability (``online``, or ``offline`` from its last will). :class:`FleetView` takes
those messages from any node and keeps what they say, bounded: :data:`MAX_NODES` nodes,
:data:`MAX_ITEMS` devices and sensors each, descriptions of at most
:data:`MAX_DESCRIPTION_BYTES`; anything malformed is logged and dropped. Pure data: no client.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from clawseed_edge.api import (
    DeviceState,
    RemoteDevice,
    RemoteDevices,
    RemoteSensor,
    SensorReading,
)

__all__ = [
    "DESCRIPTION_TOPICS",
    "MAX_DESCRIPTION_BYTES",
    "MAX_ITEMS",
    "MAX_NODES",
    "FleetNode",
    "FleetView",
    "description_topic",
    "node_description",
    "sync_remote",
]

log = logging.getLogger(__name__)

#: Nodes one view keeps; more are dropped (logged once each).
MAX_NODES = 64
#: Devices, and sensors, one node's description may list.
MAX_ITEMS = 256
#: A longer description is dropped.
MAX_DESCRIPTION_BYTES = 64 * 1024
#: What a node subscribes to for the others.
DESCRIPTION_TOPICS = ("clawseed/+/description", "clawseed/+/availability")
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def description_topic(node_id: str) -> str:
    return f"clawseed/{node_id}/description"


def node_description(
    node_id: str,
    *,
    devices: Iterable[DeviceState],
    readings: Iterable[SensorReading],
    approvals: Mapping[str, bool] | None = None,
    version: str = "",
) -> dict[str, Any]:
    """What ``node_id`` has, as its retained description."""
    approvals = approvals or {}
    return {
        "node": node_id,
        "version": version,
        "devices": [
            {"name": d.device, "kind": d.kind, "approval": bool(approvals.get(d.device, False))}
            for d in list(devices)[:MAX_ITEMS]
        ],
        "sensors": [
            {"name": r.sensor, "quantities": dict(r.units)} for r in list(readings)[:MAX_ITEMS]
        ],
    }


@dataclass(slots=True)
class FleetNode:
    """One node as the broker tells of it.

    Attributes:
        node: Its node id.
        online: ``True``/``False`` from its availability; None before any was seen.
        devices: ``{"name", "kind", "approval"}`` each.
        sensors: ``{"name", "quantities": {quantity: unit}}`` each.
        version: Its clawseed-edge version.
    """

    node: str
    online: bool | None = None
    devices: list[dict[str, Any]] = field(default_factory=list)
    sensors: list[dict[str, Any]] = field(default_factory=list)
    version: str = ""

    @property
    def state(self) -> str:
        return {True: "online", False: "offline", None: "unknown"}[self.online]


class FleetView:
    """The nodes on the broker, from their descriptions and availability messages."""

    def __init__(self) -> None:
        self._nodes: dict[str, FleetNode] = {}

    def take(self, topic: str, payload: bytes) -> bool:
        """Take one message of :data:`DESCRIPTION_TOPICS`; False (logged) when dropped."""
        parts = topic.split("/")
        if len(parts) != 3 or parts[0] != "clawseed" or not _NAME.match(parts[1]):
            return False
        node_id, what = parts[1], parts[2]
        if what == "availability":
            if payload not in (b"online", b"offline"):
                log.warning("fleet: dropped availability %r of %s", payload[:20], node_id)
                return False
            node = self._node(node_id)
            if node is not None:
                node.online = payload == b"online"
            return node is not None
        if what != "description":
            return False
        if not payload:  # an empty retained description: the node was removed
            self._nodes.pop(node_id, None)
            return True
        if len(payload) > MAX_DESCRIPTION_BYTES:
            log.warning("fleet: dropped %s's description (%d bytes)", node_id, len(payload))
            return False
        try:
            data = json.loads(payload)
            devices = [_device(d) for d in data.get("devices", [])[:MAX_ITEMS]]
            sensors = [_sensor(s) for s in data.get("sensors", [])[:MAX_ITEMS]]
            version = str(data.get("version", ""))[:32]
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            log.warning("fleet: dropped %s's malformed description (%s)", node_id, exc)
            return False
        node = self._node(node_id)
        if node is None:
            return False
        node.devices, node.sensors, node.version = devices, sensors, version
        return True

    def _node(self, node_id: str) -> FleetNode | None:
        node = self._nodes.get(node_id)
        if node is None:
            if len(self._nodes) >= MAX_NODES:
                log.warning("fleet: more than %d nodes; %s is not listed", MAX_NODES, node_id)
                return None
            node = self._nodes[node_id] = FleetNode(node_id)
        return node

    def nodes(self) -> list[FleetNode]:
        """Every node, by name."""
        return [self._nodes[k] for k in sorted(self._nodes)]

    def get(self, node_id: str) -> FleetNode | None:
        return self._nodes.get(node_id)


def sync_remote(view: FleetView, remote: RemoteDevices, topic: str) -> None:
    """After ``view`` took a message on ``topic``: what its node has, into ``remote``."""
    parts = topic.split("/")
    if len(parts) != 3 or parts[2] != "description":
        return
    node = view.get(parts[1])
    if node is None:
        remote.drop_node(parts[1])
        return
    remote.set_node(
        node.node,
        [RemoteDevice(node.node, d["name"], d["kind"], d["approval"]) for d in node.devices],
        [RemoteSensor(node.node, s["name"], s["quantities"]) for s in node.sensors],
    )


def _device(item: Any) -> dict[str, Any]:
    name = str(item["name"])
    if not _NAME.match(name):
        raise ValueError(f"device name {name[:64]!r}")
    return {
        "name": name,
        "kind": str(item.get("kind", ""))[:32],
        "approval": bool(item.get("approval", False)),
    }


def _sensor(item: Any) -> dict[str, Any]:
    name = str(item["name"])
    if not _NAME.match(name):
        raise ValueError(f"sensor name {name[:64]!r}")
    quantities = item.get("quantities", {})
    return {
        "name": name,
        "quantities": {str(q)[:32]: str(u)[:16] for q, u in list(quantities.items())[:32]},
    }

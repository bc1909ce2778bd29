"""The fleet on one broker: each node's retained description, and the view of all of them.

Every node publishes, retained, on ``clawseed/<node>/description`` what it has (devices with
their kinds and whether they need approval, sensors with their quantities) and, beside it,
its availability (``online``, or ``offline`` from its last will). :class:`FleetView` takes
those messages from any node and keeps what they say, bounded: :data:`MAX_NODES` nodes
listed, :data:`MAX_ITEMS` devices and sensors each, descriptions of at most
:data:`MAX_DESCRIPTION_BYTES`. Every field is checked (kinds from our list, names by our name
rule, no free text), and a description that breaks one is logged and dropped whole. Which nodes
are listed is chosen, not first come (see :class:`FleetView`). Pure data: no client.
"""

from __future__ import annotations

import json
import logging
import re
from collections import OrderedDict
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
from clawseed_edge.peripherals.wired.kinds import KIND_SPECS

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
#: What a node subscribes to for the others, in this order: the broker sends a subscription's
#: retained messages when it is made, so every node's availability is known before any
#: description arrives (an online node's description finds its place kept; an offline one's is
#: dropped), however many retained descriptions crowd the broker.
DESCRIPTION_TOPICS = ("clawseed/+/availability", "clawseed/+/description")
#: Nodes remembered as offline (their descriptions are dropped until they say online).
MAX_OFFLINE_REMEMBERED = 1024
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
# What a description may say: it reaches tool enums and the model's text, so each field has
# the shape our own config allows (device names are ASCII identifiers of at most 40).
_ITEM_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,39}")
_QUANTITY = re.compile(r"[a-z][a-z0-9_]{0,31}")
_UNIT = re.compile(r"[A-Za-z0-9%°µ/·²³ .-]{0,16}")
_VERSION = re.compile(r"[A-Za-z0-9.+_-]{0,32}")


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
        configured: Named in ``[mqtt] nodes`` (listed before every other node).
        seen_online: Its availability said ``online`` while we listened.
        order: When it was first heard (earlier ones are kept when the rank is equal).
    """

    node: str
    online: bool | None = None
    devices: list[dict[str, Any]] = field(default_factory=list)
    sensors: list[dict[str, Any]] = field(default_factory=list)
    version: str = ""
    configured: bool = False
    seen_online: bool = False
    order: int = 0

    @property
    def state(self) -> str:
        return {True: "online", False: "offline", None: "unknown"}[self.online]

    @property
    def rank(self) -> tuple[int, int]:
        """Lower is kept first: configured, then online and known, then the rest; by age."""
        if self.configured:
            tier = 0
        elif self.online and self.seen_online:
            tier = 1
        elif self.online is None:
            tier = 2
        else:
            tier = 3
        return (tier, self.order)


class FleetView:
    """The nodes on the broker, from their descriptions and availability messages.

    Anyone who may publish on the broker can describe a node, so what is listed is chosen,
    not first come: the nodes named in ``[mqtt] nodes`` first, then nodes heard online, then
    nodes whose availability is not known, each group oldest first; at most
    :data:`MAX_NODES` are listed (:meth:`nodes`), and a few more are held as candidates
    (``2 * MAX_NODES`` in all), so a real node that comes online later than a crowd of fake
    retained descriptions takes a place from one of them. A node not named in ``[mqtt] nodes``
    whose availability says ``offline`` (its last will) is forgotten with its description.

    Args:
        known: The node ids of ``[mqtt] nodes``.
        max_nodes: Nodes listed at most.
    """

    def __init__(self, known: Iterable[str] = (), *, max_nodes: int = MAX_NODES) -> None:
        self._known = frozenset(known)
        self._max = max_nodes
        self._nodes: dict[str, FleetNode] = {}
        self._heard = 0
        self._listed: tuple[str, ...] = ()
        self._offline: OrderedDict[str, None] = OrderedDict()
        #: The node ids last given to a RemoteDevices by :func:`sync_remote`.
        self.pushed: set[str] = set()

    def take(self, topic: str, payload: bytes) -> bool:
        """Take one message of :data:`DESCRIPTION_TOPICS`; False (logged) when dropped."""
        parts = topic.split("/")
        if len(parts) != 3 or parts[0] != "clawseed" or not _NAME.match(parts[1]):
            return False
        node_id, what = parts[1], parts[2]
        if what == "availability":
            return self._take_availability(node_id, payload)
        if what != "description":
            return False
        if not payload:  # an empty retained description: the node was removed
            self._forget(node_id)
            return True
        if len(payload) > MAX_DESCRIPTION_BYTES:
            log.warning("fleet: dropped %s's description (%d bytes)", node_id, len(payload))
            return False
        if node_id in self._offline:
            log.debug("fleet: dropped %s's description: its last will says offline", node_id)
            return False
        try:
            data = json.loads(payload)
            devices = [_device(d) for d in data.get("devices", [])[:MAX_ITEMS]]
            sensors = [_sensor(s) for s in data.get("sensors", [])[:MAX_ITEMS]]
            version = _version(data.get("version", ""))
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            log.warning("fleet: dropped %s's malformed description (%s)", node_id, exc)
            return False
        node = self._node(node_id, None)
        if node is None:
            return False
        node.devices, node.sensors, node.version = devices, sensors, version
        return True

    def _take_availability(self, node_id: str, payload: bytes) -> bool:
        if payload not in (b"online", b"offline"):
            log.warning("fleet: dropped availability %r of %s", payload[:20], node_id)
            return False
        online = payload == b"online"
        if not online and node_id not in self._known:
            # Its last will (or a clean stop): a retained description of a node that is not
            # there is not listed; the node publishes it again when it comes back.
            self._forget(node_id)
            self._offline[node_id] = None
            self._offline.move_to_end(node_id)
            while len(self._offline) > MAX_OFFLINE_REMEMBERED:
                self._offline.popitem(last=False)
            return True
        self._offline.pop(node_id, None)
        node = self._node(node_id, online)
        if node is None:
            return False
        node.online = online
        node.seen_online = node.seen_online or online
        self._relist()
        return True

    def _node(self, node_id: str, online: bool | None) -> FleetNode | None:
        node = self._nodes.get(node_id)
        if node is not None:
            return node
        self._heard += 1
        node = FleetNode(node_id, configured=node_id in self._known, order=self._heard)
        node.online, node.seen_online = online, bool(online)
        if len(self._nodes) >= 2 * self._max:
            # Full: the newcomer takes the place of the lowest-ranked node it outranks.
            worst = max(self._nodes.values(), key=lambda n: n.rank)
            if worst.rank <= node.rank:
                log.warning("fleet: more than %d nodes; %s is not listed", self._max, node_id)
                return None
            del self._nodes[worst.node]
        self._nodes[node_id] = node
        self._relist()
        return node

    def _forget(self, node_id: str) -> None:
        if self._nodes.pop(node_id, None) is not None:
            self._relist()

    def _relist(self) -> None:
        ranked = sorted(self._nodes.values(), key=lambda n: n.rank)[: self._max]
        listed = tuple(sorted(n.node for n in ranked))
        if listed != self._listed:
            left_out = len(self._nodes) - len(listed)
            if left_out:
                log.warning(
                    "fleet: %d nodes are heard but not listed (max %d)", left_out, self._max
                )
            self._listed = listed

    def nodes(self) -> list[FleetNode]:
        """The listed nodes, by name."""
        return [self._nodes[k] for k in self._listed]

    def get(self, node_id: str) -> FleetNode | None:
        """``node_id`` if it is listed."""
        return self._nodes.get(node_id) if node_id in self._listed else None


def sync_remote(view: FleetView, remote: RemoteDevices, topic: str) -> None:
    """After ``view`` took a message on ``topic``: what the listed nodes have, into ``remote``
    (the node of ``topic``, and any node that entered or left the list)."""
    parts = topic.split("/")
    if len(parts) != 3:
        return
    listed = {n.node: n for n in view.nodes()}
    for gone in view.pushed - listed.keys():
        remote.drop_node(gone)
    changed = listed.keys() - view.pushed
    if parts[2] == "description" and parts[1] in listed:
        changed.add(parts[1])
    for node in (listed[n] for n in sorted(changed)):
        remote.set_node(
            node.node,
            [RemoteDevice(node.node, d["name"], d["kind"], d["approval"]) for d in node.devices],
            [RemoteSensor(node.node, s["name"], s["quantities"]) for s in node.sensors],
        )
    view.pushed = set(listed)


def _device(item: Any) -> dict[str, Any]:
    name = _checked_name(item["name"], "device")
    kind = item.get("kind")
    if kind not in KIND_SPECS:
        raise ValueError(f"device {name}: kind {str(kind)[:32]!r} is not one of ours")
    approval = item.get("approval", False)
    if not isinstance(approval, bool):
        raise ValueError(f"device {name}: approval is not true or false")
    return {"name": name, "kind": kind, "approval": approval}


def _sensor(item: Any) -> dict[str, Any]:
    name = _checked_name(item["name"], "sensor")
    quantities = item.get("quantities", {})
    if not isinstance(quantities, dict) or len(quantities) > 32:
        raise ValueError(f"sensor {name}: quantities is not a table of at most 32")
    for quantity, unit in quantities.items():
        if not _QUANTITY.fullmatch(quantity) or not isinstance(unit, str):
            raise ValueError(f"sensor {name}: quantity {str(quantity)[:32]!r}")
        if not _UNIT.fullmatch(unit):
            raise ValueError(f"sensor {name}: unit {unit[:16]!r} of {quantity}")
    return {"name": name, "quantities": dict(quantities)}


def _checked_name(value: Any, what: str) -> str:
    """A device or sensor name by the rule of our own config (an ASCII identifier, <= 40):
    it goes into tool enums and the model's text as it is."""
    if not isinstance(value, str) or not _ITEM_NAME.fullmatch(value):
        raise ValueError(f"{what} name {str(value)[:64]!r}")
    return value


def _version(value: Any) -> str:
    if not isinstance(value, str) or not _VERSION.fullmatch(value):
        raise ValueError(f"version {str(value)[:32]!r}")
    return value

"""Other nodes' devices and sensors, as this node's ordinary tools offer them (``shed.fan``).

A channel that hears of other nodes (MQTT: their retained descriptions) fills a
:class:`RemoteDevices` and binds the function that carries a call to the owning node; the
device tools read it for their enums and route a call to ``<node>.<name>`` through it. Tools
and peripherals depend on this module only, never on the channel.

Names: a remote entry is always ``<node>.<name>``, split at the first dot. Node ids and the
names in a description hold no dot (``[A-Za-z0-9_-]``) and a configured device or sensor name
is an identifier, so a remote name never equals a local one; a plugin's local device that has a
dot in its name wins, and the remote entry of that name is left out.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .types import ToolResult

__all__ = [
    "MAX_REMOTE_ENTRIES",
    "RemoteCall",
    "RemoteDevice",
    "RemoteDevices",
    "RemoteSensor",
    "split_remote_name",
]

log = logging.getLogger(__name__)

#: Remote devices (and, apart, remote sensors) that enter the tools' enums by default.
MAX_REMOTE_ENTRIES = 64

#: ``await call(node, tool, arguments)``: the owning node's answer, or a failed result.
RemoteCall = Callable[[str, str, dict[str, Any]], Awaitable[ToolResult]]


def split_remote_name(name: str) -> tuple[str, str] | None:
    """``("shed", "fan")`` for ``"shed.fan"``; None for a name without a dot."""
    node, dot, rest = name.partition(".")
    if not dot or not node or not rest:
        return None
    return node, rest


@dataclass(frozen=True, slots=True)
class RemoteDevice:
    """A device of another node: its ``kind`` decides which tools list it."""

    node: str
    name: str
    kind: str
    approval: bool = False

    @property
    def full_name(self) -> str:
        return f"{self.node}.{self.name}"


@dataclass(frozen=True, slots=True)
class RemoteSensor:
    """A sensor of another node, with its quantities (``{"temperature": "°C"}``)."""

    node: str
    name: str
    quantities: Mapping[str, str] = field(default_factory=dict)

    @property
    def full_name(self) -> str:
        return f"{self.node}.{self.name}"


class RemoteDevices:
    """The other nodes' devices and sensors, by node; bounded, and revised on every change.

    Args:
        limit: Devices (and, apart, sensors) listed at most; the rest are left out (logged
            once per change), by node, each in its own order.
        own_node: This node's id: its own description is never listed as remote.

    :attr:`revision` increases whenever what :meth:`devices` or :meth:`sensors` return
    changes (tool schemas are rebuilt on it; the agent's next turn sees the new enums).
    """

    def __init__(self, *, limit: int = MAX_REMOTE_ENTRIES, own_node: str = "") -> None:
        self.limit = limit
        self.own_node = own_node
        self.revision = 0
        self._devices: dict[str, tuple[RemoteDevice, ...]] = {}
        self._sensors: dict[str, tuple[RemoteSensor, ...]] = {}
        self._listed: tuple[tuple[RemoteDevice, ...], tuple[RemoteSensor, ...]] = ((), ())
        self._caller: RemoteCall | None = None

    # --- filled by a channel ---------------------------------------------------------------

    def set_node(
        self, node: str, devices: Iterable[RemoteDevice], sensors: Iterable[RemoteSensor]
    ) -> None:
        """What ``node`` has now (replaces what it had); this node's own id is ignored."""
        if not node or "." in node or node == self.own_node:
            return
        self._devices[node] = tuple(devices)
        self._sensors[node] = tuple(sensors)
        self._relist()

    def drop_node(self, node: str) -> None:
        """Forget ``node`` (its description was removed from the broker)."""
        had_devices = self._devices.pop(node, None) is not None
        if self._sensors.pop(node, None) is not None or had_devices:
            self._relist()

    def bind(self, caller: RemoteCall | None) -> None:
        """Who carries calls to the owning nodes (None: nobody, calls fail saying so)."""
        self._caller = caller

    # --- read by the tools -----------------------------------------------------------------

    def devices(self) -> tuple[RemoteDevice, ...]:
        """The listed devices (at most ``limit``), by node, each node's in its own order."""
        return self._listed[0]

    def sensors(self) -> tuple[RemoteSensor, ...]:
        """The listed sensors (at most ``limit``), by node, each node's in its own order."""
        return self._listed[1]

    def device(self, full_name: str) -> RemoteDevice | None:
        return next((d for d in self._listed[0] if d.full_name == full_name), None)

    def sensor(self, full_name: str) -> RemoteSensor | None:
        return next((s for s in self._listed[1] if s.full_name == full_name), None)

    async def call(self, node: str, tool: str, arguments: dict[str, Any]) -> ToolResult:
        """Run ``tool(arguments)`` on ``node`` (``arguments`` name the node's own device);
        the owning node decides. Never raises for the call: a failure is a failed result.

        Safe to cancel (the owner may still run the call).
        """
        caller = self._caller
        if caller is None:
            return ToolResult.fail(
                f"{node}.{arguments.get('device') or arguments.get('sensor')} is on another "
                "node, and this process is not connected to the fleet's MQTT broker now"
            )
        return await caller(node, tool, arguments)

    # --- internals -------------------------------------------------------------------------

    def _relist(self) -> None:
        devices = [d for n in sorted(self._devices) for d in self._devices[n]]
        sensors = [s for n in sorted(self._sensors) for s in self._sensors[n]]
        if len(devices) > self.limit or len(sensors) > self.limit:
            log.warning(
                "fleet: %d remote devices and %d remote sensors; only the first %d of each "
                "reach the tools (raise [mqtt] max_remote_entries to list more)",
                len(devices),
                len(sensors),
                self.limit,
            )
        listed = (tuple(devices[: self.limit]), tuple(sensors[: self.limit]))
        if listed != self._listed:
            self._listed = listed
            self.revision += 1

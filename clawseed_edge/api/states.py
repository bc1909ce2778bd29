"""Device states and sensor readings, published by peripherals and subscribed to by the rest.

gpiozero's ``when_*`` callbacks and ESPHome's ``add_on_state_callback``, in one small class: a
peripheral owns a :class:`StateFeed` (its ``states`` attribute) and publishes a
:class:`DeviceState` where a device's value changes and a :class:`SensorReading` where a sensor
is read. The web app's live dashboard, history, automations and bridges subscribe; nothing
outside the agent reads hardware by calling a model's tool.

A feed keeps the latest update per device or sensor (a new subscriber starts from
:meth:`StateFeed.latest`) and drops a device update that repeats the last one. ``publish`` may
be called from any thread (gpiozero's callback threads, a bus worker): each subscriber is called
on the event loop it subscribed from.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

__all__ = [
    "DeviceState",
    "SensorReading",
    "StateFeed",
    "StateListener",
    "StateSource",
    "StateUpdate",
]

log = logging.getLogger(__name__)

#: Subscribers one feed takes; one more is refused (a leak, not a use).
MAX_SUBSCRIBERS = 256


@dataclass(frozen=True, slots=True)
class DeviceState:
    """A wired device's state, as its peripheral published it.

    Attributes:
        peripheral: The peripheral's name.
        device: The configured device name.
        kind: ``led``, ``relay``, ``button`` ...
        pin: The canonical pin name.
        value: 0/1 for switches and inputs, 0..1 for a level, -1..1 for a servo, None when
            unknown (a detached servo, a closed device).
        mode: ``input``, ``output``, ``pwm`` or ``closed``.
        time: When it was published, Unix seconds (not compared: a repeat is no change).
        range: For a device that takes a level, the (min, max) a write may carry, its
            configured cap included (a slider stops there); None for the others.
    """

    peripheral: str
    device: str
    kind: str
    pin: str
    value: float | None
    mode: str = "output"
    time: float = field(default_factory=time.time, compare=False)
    range: tuple[float, float] | None = None

    @classmethod
    def from_status(cls, peripheral: str, status: Mapping[str, Any]) -> DeviceState:
        """From a peripheral's status entry (``pin``, ``device``, ``kind``, ``mode``, ``value``)."""
        value = status.get("value")
        lo, hi = status.get("min"), status.get("max")
        return cls(
            peripheral=peripheral,
            device=str(status["device"]),
            kind=str(status.get("kind", "")),
            pin=str(status.get("pin", "")),
            value=None if value is None else float(value),
            mode=str(status.get("mode", "output")),
            range=None if lo is None or hi is None else (float(lo), float(hi)),
        )

    @property
    def key(self) -> tuple[str, str]:
        return ("device", self.device)

    def as_dict(self) -> dict[str, Any]:
        """Plain data (what ``hardware_status`` and the ``devices`` frame list)."""
        return {
            "pin": self.pin,
            "device": self.device,
            "kind": self.kind,
            "mode": self.mode,
            "value": self.value,
            "peripheral": self.peripheral,
            **({} if self.range is None else {"min": self.range[0], "max": self.range[1]}),
        }


@dataclass(frozen=True, slots=True)
class SensorReading:
    """One reading of a sensor (or the failure to take it).

    Attributes:
        peripheral: The peripheral's name.
        sensor: The configured sensor name.
        values: Quantity -> value, in the quantity's unit (empty when ``error`` is set).
        units: Quantity -> unit (``°C``, ``hPa``, ``%``).
        time: When it was read, Unix seconds.
        error: Why no reading could be taken ("" for a good reading).
    """

    peripheral: str
    sensor: str
    values: Mapping[str, float]
    units: Mapping[str, str]
    time: float
    error: str = ""

    @property
    def key(self) -> tuple[str, str]:
        return ("sensor", self.sensor)

    @property
    def ok(self) -> bool:
        return not self.error

    def as_dict(self) -> dict[str, Any]:
        return {
            "sensor": self.sensor,
            "values": dict(self.values),
            "units": dict(self.units),
            "time": self.time,
        }


StateUpdate = DeviceState | SensorReading
#: ``listener(update)``, called on the loop it subscribed from; it must not block.
StateListener = Callable[[StateUpdate], None]


class StateFeed:
    """Publish/subscribe for one peripheral's device states and sensor readings."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._latest: dict[tuple[str, str], StateUpdate] = {}
        self._subscribers: dict[int, tuple[StateListener, asyncio.AbstractEventLoop | None]] = {}
        self._keys = itertools.count(1)

    def subscribe(self, listener: StateListener) -> Callable[[], None]:
        """Call ``listener(update)`` for every update from now on; returns the unsubscriber.

        Called from a running loop, the listener runs on that loop; otherwise on the thread
        that publishes.

        Raises:
            RuntimeError: :data:`MAX_SUBSCRIBERS` are subscribed already (unsubscribe first).
        """
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        key = next(self._keys)
        with self._lock:
            if len(self._subscribers) >= MAX_SUBSCRIBERS:
                raise RuntimeError(
                    f"a state feed takes at most {MAX_SUBSCRIBERS} subscribers; "
                    "unsubscribe the ones that are done"
                )
            self._subscribers[key] = (listener, loop)

        def unsubscribe() -> None:
            with self._lock:
                self._subscribers.pop(key, None)

        return unsubscribe

    def publish(self, update: StateUpdate) -> bool:
        """Record ``update`` and pass it on; returns False for a device state that repeats the
        last one (nothing is passed on). Safe from any thread; never raises for a listener."""
        with self._lock:
            if isinstance(update, DeviceState) and self._latest.get(update.key) == update:
                return False
            self._latest[update.key] = update
            subscribers = list(self._subscribers.values())
        for listener, loop in subscribers:
            _deliver(listener, loop, update)
        return True

    def latest(self) -> list[StateUpdate]:
        """The last update of every device and sensor, in the order they first appeared."""
        with self._lock:
            return list(self._latest.values())

    def devices(self) -> list[DeviceState]:
        return [u for u in self.latest() if isinstance(u, DeviceState)]

    def readings(self) -> list[SensorReading]:
        return [u for u in self.latest() if isinstance(u, SensorReading)]

    @property
    def subscribers(self) -> int:
        return len(self._subscribers)


def _deliver(
    listener: StateListener, loop: asyncio.AbstractEventLoop | None, update: StateUpdate
) -> None:
    try:
        running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if loop is None or loop is running:
        _call(listener, update)
        return
    try:
        loop.call_soon_threadsafe(_call, listener, update)
    except RuntimeError:  # the subscriber's loop is closed: it is gone
        pass


def _call(listener: StateListener, update: StateUpdate) -> None:
    try:
        listener(update)
    except Exception:  # one subscriber's bug must not stop the others
        log.exception("a state subscriber failed on %s", update.key)


@runtime_checkable
class StateSource(Protocol):
    """A peripheral that publishes its devices' states and its sensors' readings.

    ``refresh`` asks the hardware for what only asking tells (inputs without edges, sensors):
    the answers arrive through ``states``. It raises api errors only.
    """

    name: str
    states: StateFeed

    async def refresh(self) -> None: ...

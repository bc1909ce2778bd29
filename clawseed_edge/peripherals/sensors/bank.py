"""``SensorBank``: the configured sensors and displays as one Peripheral.

It owns one :class:`~clawseed_edge.peripherals.i2c.I2CBus` per bus number (each with its worker
thread) and one :class:`~.worker.BlockingWorker` per sysfs sensor; drivers run only there.
With ``sim`` the same drivers run against a :class:`~.sim.SensorSimulation`.

Readings are cached for each sensor's minimum interval (:mod:`.channel`; a DHT22 rests 2 s
between measurements). A failed read is never cached: the next call tries the sensor again.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clawseed_edge.api import (
    ConfigInvalid,
    DeviceNotFound,
    HardwareError,
    HealthStatus,
    Lifecycle,
    PeripheralClosed,
    SensorReading,
    Tool,
    ToolArgumentsInvalid,
)

from ..sensor_driver import Reading
from ..worker import BlockingWorker
from .channel import SensorChannel as _Channel
from .config import I2CSettings, ValidSensor, where
from .feeds import SensorFeeds
from .registry import DriverRegistry, default_driver_registry
from .sim import SensorSimulation, check_target, split_target

if TYPE_CHECKING:
    from clawseed_edge.peripherals.i2c import I2CBus

__all__ = ["KERNEL_PIN_DRIVERS", "SensorBank"]

#: Drivers whose sensor a kernel driver reads on one header pin (the overlay in config.txt).
KERNEL_PIN_DRIVERS = frozenset({"ds18b20", "dht11", "dht22"})

log = logging.getLogger(__name__)


class SensorBank:
    """Sensors and displays on I2C buses and in sysfs, as a Peripheral.

    Args:
        sensors: From :func:`~.config.validate_sensors`.
        settings: ``[i2c]``.
        sim: Run against simulated chips and a fake sysfs tree.
        name: The peripheral's name.
        board_type: The board id, for status.
        registry: Driver lookup (sim models come from it).
        sysfs_root: Where the kernel's files are (``/sys``; ignored with ``sim``).
        bus_openers: Bus number -> SMBus opener, to replace ``/dev/i2c-N`` (tests).
        clock: Monotonic seconds, for the reading cache.
    """

    def __init__(
        self,
        sensors: Sequence[ValidSensor],
        *,
        settings: I2CSettings | None = None,
        sim: bool = False,
        name: str = "sensors",
        board_type: str = "sim",
        registry: DriverRegistry | None = None,
        sysfs_root: Path = Path("/sys"),
        bus_openers: dict[int, Callable[[], Any]] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.name = name
        self.board_type = board_type
        self.settings = settings or I2CSettings()
        self.is_sim = sim
        self.registry = registry or default_driver_registry()
        self.sysfs_root = sysfs_root
        self.state = Lifecycle.UNOPENED
        self._channels = {s.name: _Channel(s) for s in sensors}
        self._openers = dict(bus_openers or {})
        self._buses: dict[int, I2CBus] = {}
        self._clock = clock
        self._sim = SensorSimulation() if sim else None
        self._tools: list[Tool] | None = None
        #: What it publishes (:class:`~.feeds.SensorFeeds`): ``states``, what every reader
        #: shows (a sampled sensor's filtered value), and ``raw_states``, every raw reading.
        self.feeds = SensorFeeds(name, self._channels)
        self.states = self.feeds.states
        self.raw_states = self.feeds.raw

    # --- lifecycle ----------------------------------------------------------------------------

    @property
    def sim(self) -> SensorSimulation:
        """The simulated hardware (only with ``sim``): ``bank.sim.sensor("greenhouse").set(...)``."""
        if self._sim is None:
            raise HardwareError(f"peripheral {self.name!r} runs on real hardware, not simulated")
        return self._sim

    def sim_set(self, target: str, value: float) -> tuple[str, str, float]:
        """Set what simulated sensor ``SENSOR.QUANTITY`` measures (``greenhouse.temperature``).

        Returns (sensor, quantity, value); the next read measures it.

        Raises:
            HardwareError: The bank runs on real hardware.
            ToolArgumentsInvalid: Not ``SENSOR.QUANTITY``, an unknown quantity (the known ones
                are listed), a value that is not a finite number.
            DeviceNotFound: No such sensor.
        """
        sensor, quantity = split_target(target)
        valid = self._channel(sensor).valid
        known = [] if valid.display else [q.name for q in valid.driver.quantities]
        number = check_target(target, quantity, known, value)
        self.sim.sensor(sensor).set(**{quantity: number})
        return sensor, quantity, number

    async def connect(self) -> None:
        """Open the buses, make the drivers and set the sensors up.

        A sensor that does not answer yet is logged and set up again at its first read; a bus
        that cannot be opened or a bad driver option stops the connect.

        Raises:
            BusNotFound, BusAccessDenied: A configured bus cannot be opened (what to do is said).
            ConfigInvalid: A driver refused its options, or has no simulated model in sim.
        """
        if self.state is Lifecycle.OPEN:
            return
        if self.state is Lifecycle.CLOSED:
            raise PeripheralClosed(f"peripheral {self.name!r} was disconnected; make a new one")
        self.state = Lifecycle.OPEN
        try:
            await self._open()
        except BaseException:
            await self.disconnect()
            raise

    async def _open(self) -> None:
        from clawseed_edge.peripherals.i2c import I2CBus

        if self._sim is not None:
            for ch in self._channels.values():
                self._sim.add(ch.valid, self.registry)
            for number, sim_bus in self._sim.buses.items():
                self._openers.setdefault(number, sim_bus.opener())
        for number in sorted({c.valid.config.bus for c in self._i2c()}):
            bus = I2CBus(number, opener=self._openers.get(number), attempts=self.settings.attempts)
            self._buses[number] = bus
            await bus.open()
        for ch in self._channels.values():
            # A sensor that is not there yet (unplugged, a 1-Wire probe not found) is not a
            # reason to refuse to start: it is logged, and its first read tries again.
            try:
                await self._make_driver(ch)
                await self._run(ch, lambda _: None, "setting up")
            except HardwareError as exc:
                log.warning("sensor %s is not ready: %s", ch.name, exc)

    async def _make_driver(self, ch: _Channel) -> None:
        cfg = ch.valid.config
        cls = ch.valid.driver
        try:
            if ch.valid.transport == "i2c":
                bus = self._buses[cfg.bus]
                ch.driver = await bus.call(
                    lambda h: cls(h, ch.valid.address, **cfg.options),
                    what=f"{ch.name}: making the driver",
                    address=None,
                )
            else:
                if ch.worker is None:
                    ch.worker = BlockingWorker(f"sysfs-{ch.name}")
                ch.driver = await ch.worker.run(self._make_sysfs_driver, ch)
        except TypeError as exc:
            raise ConfigInvalid(
                f"{ch.name!r}: driver {cfg.driver} does not take these options: {exc}",
                key=f"{ch.valid.key}.options",
            ) from exc

    def _make_sysfs_driver(self, ch: _Channel) -> Any:
        cfg = ch.valid.config
        cls = ch.valid.driver
        if self._sim is not None:
            root, kwargs = self._sim.sysfs.root, {"reader": self._sim.sysfs.reader()}
        else:
            root, kwargs = self.sysfs_root, {}
        return cls(cls.locate(root, cfg.device), **kwargs, **cfg.options)

    async def disconnect(self) -> None:
        """Close buses and workers and remove a simulated tree. Idempotent; safe to cancel."""
        if self.state is Lifecycle.CLOSED:
            return
        self.state = Lifecycle.CLOSED
        for ch in self._channels.values():
            if ch.ahead is not None:
                ch.ahead.cancel()
        await self.apply_safe_state()  # no chip left measuring on its own
        for bus in self._buses.values():
            await bus.aclose()
        for ch in self._channels.values():
            if ch.worker is not None:
                await ch.worker.aclose()
        if self._sim is not None:
            self._sim.close()

    async def apply_safe_state(self) -> None:
        """Sensors and displays drive no outputs; a chip measuring on its own (a BME280 in
        normal mode) goes back to sleep (:meth:`~.channel.SensorChannel.sleep_chip`)."""
        for ch in self._i2c():
            if (bus := self._buses.get(ch.valid.config.bus)) is not None:
                await ch.sleep_chip(bus)

    async def health_check(self) -> HealthStatus:
        """Healthy when connected and every sensor was set up."""
        if self.state is not Lifecycle.OPEN:
            return HealthStatus(False, f"{self.name}: not connected")
        waiting = [c.name for c in self._channels.values() if not c.ready]
        if waiting:
            return HealthStatus(False, f"{self.name}: not answering yet: {', '.join(waiting)}")
        where = "simulated" if self.is_sim else "on hardware"
        return HealthStatus(True, f"{len(self._channels)} sensors/displays {where}")

    async def __aenter__(self) -> SensorBank:
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.disconnect()

    # --- what the tools call ------------------------------------------------------------------

    def sensor_names(self) -> list[str]:
        """Configured sensors (not displays), in config order."""
        return [c.name for c in self._channels.values() if not c.valid.display]

    def display_names(self) -> list[str]:
        """Configured displays, in config order."""
        return [c.name for c in self._channels.values() if c.valid.display]

    def bus_numbers(self) -> list[int]:
        """The I2C buses in use, ascending."""
        return sorted({c.valid.config.bus for c in self._i2c()})

    def kernel_sensors(self) -> list[tuple[str, str]]:
        """``(name, driver)`` of the sensors a kernel driver reads on a header pin (1-Wire
        DS18B20, DHT11/DHT22: the pin is set by their overlay in config.txt), config order."""
        return [
            (c.name, c.valid.config.driver)
            for c in self._channels.values()
            if c.valid.config.driver in KERNEL_PIN_DRIVERS
        ]

    def sensor(self, name: str) -> ValidSensor:
        """The validated config of sensor or display ``name``.

        Raises:
            DeviceNotFound: No such name (the configured ones are listed).
        """
        return self._channel(name).valid

    async def read(self, name: str, *, for_filters: bool = False) -> Reading:
        """A reading of sensor ``name``: new, or the last one if it is younger than the
        sensor's minimum interval (then ``cached`` is true).

        ``for_filters``: the sampler reads it for its filter chains, which publish what comes
        out (:class:`~.feeds.SensorFeeds`); the raw reading goes to ``raw_states`` only.

        Raises:
            DeviceNotFound: No such sensor.
            HardwareError: The sensor or its bus failed (DeviceNoResponse, BusLost,
                SensorDataInvalid ...); nothing is cached, the next call tries again.

        Safe to cancel: a read already running completes on its worker.
        """
        ch = self._channel(name)
        if ch.valid.display:
            raise DeviceNotFound(f"{name} is a display, not a sensor; use display_show")
        ahead = ch.take_ahead()  # read by the worker just before (see read_ahead)
        if ahead is None and ch.last is not None and self._clock() - ch.last_at < ch.cache_s:
            return dataclasses.replace(ch.last, cached=True)
        try:
            if ahead is None:
                values, age = await self._run(ch, lambda d: d.read(), "reading"), 0.0
            elif ahead[0].error is not None:
                if ch.valid.transport == "i2c":
                    ch.ready = False  # as after a read when asked: set the chip up again
                raise ahead[0].error
            else:
                values, age = ahead[0].result, ahead[1]
        except HardwareError as exc:
            self.feeds.publish_read(SensorReading(self.name, name, {}, {}, time.time(), str(exc)))
            raise
        reading = ch.keep(values, age, self._clock())  # taken age s ago; kept for the cache
        raw = SensorReading(self.name, name, values, reading.units, reading.time)
        self.feeds.publish_read(raw, for_filters=for_filters)
        return reading

    def read_ahead(self, name: str, ready_in_s: float, every_s: float) -> bool:
        """Have the worker of ``name`` read it on its own, ready in ``ready_in_s`` seconds, then
        every ``every_s``; :meth:`read` takes the reading waiting there. For a reader on a fixed
        interval: no job posted, no result sent back to the loop, the read done when it asks.

        Replaces an earlier schedule; ``every_s`` 0 stops it. False when the sensor cannot be
        read ahead (not connected, a display, no sysfs device): :meth:`read` reads as always.
        """
        ch = self._channel(name)
        if ch.ahead is not None:
            ch.ahead.cancel()
            ch.ahead = None
        ch.sampled_every(every_s)
        if every_s <= 0 or self.state is not Lifecycle.OPEN or ch.valid.display:
            return False
        step = ch.step(lambda d: d.read())
        if ch.valid.transport == "i2c":
            what = f"reading {ch.name} ({ch.valid.config.driver})"
            ch.ahead = self._buses[ch.valid.config.bus].repeat(
                ch.on_bus(step),
                what=what,
                address=ch.valid.address,
                ready_in_s=ready_in_s,
                every_s=every_s,
            )
        elif (driver := ch.driver) is not None and ch.worker is not None:
            ch.ahead = ch.worker.repeat(lambda: step(driver), ready_in_s, every_s)
        return ch.ahead is not None

    def last_reading(self, name: str) -> Reading | None:
        """The last good reading of ``name`` (no hardware access), for status."""
        return self._channel(name).last

    async def show(self, name: str, text: str) -> list[str]:
        """Lay ``text`` out on display ``name`` and show it; returns the lines shown.

        Raises:
            ToolArgumentsInvalid: The text does not fit (how much does is said).
            DeviceNotFound, HardwareError: As :meth:`read`.
        """
        from clawseed_edge.peripherals.i2c.drivers.hd44780 import layout

        ch = self._channel(name)
        if not ch.valid.display:
            raise DeviceNotFound(
                f"{name} is a sensor, not a display; displays: "
                f"{', '.join(self.display_names()) or 'none'}"
            )
        columns = int(getattr(ch.driver, "columns", 16))
        rows = int(getattr(ch.driver, "rows", 2))
        lines = layout(text, columns, rows)
        await self._run(ch, lambda d: d.show(lines), "writing to")
        return lines

    async def scan(self, bus: int) -> list[int]:
        """Addresses that answer on I2C bus ``bus`` (a configured one)."""
        return await self._bus(bus).scan()

    async def read_register(self, bus: int, address: int, register: int, length: int) -> list[int]:
        """``length`` bytes (1..32) from ``register`` of the chip at ``address``."""
        if not 1 <= length <= 32:
            raise ToolArgumentsInvalid(f"length {length} is outside 1..32 (an SMBus block)")
        return await self._bus(bus).call(
            lambda h: list(h.read_i2c_block_data(address, register, length)),
            what=f"reading register 0x{register:02x}",
            address=address,
        )

    async def write_register(self, bus: int, address: int, register: int, data: list[int]) -> None:
        """Write ``data`` (1..32 bytes) to ``register`` of the chip at ``address``."""
        if not 1 <= len(data) <= 32 or any(not 0 <= b <= 255 for b in data):
            raise ToolArgumentsInvalid("data must be 1..32 bytes, each 0..255")
        await self._bus(bus).call(
            lambda h: h.write_i2c_block_data(address, register, data),
            what=f"writing register 0x{register:02x}",
            address=address,
        )

    async def refresh(self) -> None:
        """Read every sensor now (within its minimum interval: the cached reading, not
        published again); readings arrive through :attr:`states`."""
        await self.status(read=True)

    async def status(self, *, read: bool = False) -> list[dict[str, Any]]:
        """Every sensor and display, for ``hardware status``.

        Args:
            read: Read every sensor now (a cached reading within its interval); a failure is
                reported in ``error``. Otherwise only the last reading is shown.
        """
        out = []
        for ch in self._channels.values():
            cfg = ch.valid.config
            entry: dict[str, Any] = {"device": ch.name, "kind": cfg.driver}
            entry["where"] = where(ch.valid)
            if read and not ch.valid.display:
                try:
                    await self.read(ch.name)
                except HardwareError as exc:
                    entry["error"] = str(exc)
            entry["ready"] = ch.ready
            if ch.last is not None:
                entry["reading"] = ch.last.text()
                entry["values"] = ch.last.as_data()["values"]
            if ch.valid.display:
                entry["lines"] = list(getattr(ch.driver, "lines", []))
            out.append(entry)
        return out

    # --- description, tools -------------------------------------------------------------------

    def contents(self) -> str:
        """What the bank holds, for the service's start line: ``2 sensors and 1 display``."""
        sensors, displays = len(self.sensor_names()), len(self.display_names())
        text = f"{sensors} sensor{'' if sensors == 1 else 's'}"
        return text + (f" and {displays} display{'' if displays == 1 else 's'}" if displays else "")

    def describe(self) -> str:
        """Lines for the system prompt: each sensor, where it is, what it measures, in what."""
        lines = ["Sensors (read them with sensor_read; values come with units):"]
        for ch in self._channels.values():
            v = ch.valid
            if v.display:
                continue
            measures = ", ".join(f"{q.name} ({q.unit})" for q in v.driver.quantities)
            extra = f"; {v.config.description}" if v.config.description else ""
            lines.append(f"- {v.name}: {v.config.driver} {where(v)}: {measures}{extra}")
        displays = self.display_names()
        if displays:
            lines.append(f"Displays (write with display_show): {', '.join(displays)}.")
        if self.is_sim:
            lines.append("These sensors are simulated (no hardware attached).")
        return "\n".join(lines)

    def tools(self) -> Sequence[Tool]:
        """sensor_read, i2c_scan, display_show and (with ``raw_access``) the register tools,
        each only when something it can act on is configured."""
        if self._tools is None:
            from .tools import build_sensor_tools

            self._tools = build_sensor_tools(self)
        return self._tools

    # --- internals ----------------------------------------------------------------------------

    def _i2c(self) -> list[_Channel]:
        return [c for c in self._channels.values() if c.valid.transport == "i2c"]

    def _channel(self, name: str) -> _Channel:
        try:
            return self._channels[name]
        except KeyError:
            known = ", ".join(self._channels) or "none"
            raise DeviceNotFound(
                f"no sensor or display named {name!r}; configured: {known}"
            ) from None

    def _bus(self, number: int) -> I2CBus:
        if self.state is not Lifecycle.OPEN:
            raise HardwareError(f"peripheral {self.name!r} is not connected")
        try:
            return self._buses[number]
        except KeyError:
            known = ", ".join(str(n) for n in self._buses) or "none"
            raise ToolArgumentsInvalid(
                f"I2C bus {number} is not configured; buses: {known}"
            ) from None

    async def _run(self, ch: _Channel, op: Callable[[Any], Any], verb: str) -> Any:
        """``op(driver)`` on the channel's worker, setting the driver up first if needed."""
        if self.state is not Lifecycle.OPEN:
            raise HardwareError(f"peripheral {self.name!r} is not connected")
        what = f"{verb} {ch.name} ({ch.valid.config.driver})"
        step = ch.step(op)
        if ch.valid.transport == "i2c":
            bus = self._buses[ch.valid.config.bus]
            try:
                return await bus.call(ch.on_bus(step), what=what, address=ch.valid.address)
            except HardwareError:
                ch.ready = False  # a chip that was reset or replugged needs its setup again
                raise
        if ch.driver is None:  # its sysfs directory was not found at connect
            await self._make_driver(ch)
        assert ch.worker is not None
        return await ch.worker.run(step, ch.driver)

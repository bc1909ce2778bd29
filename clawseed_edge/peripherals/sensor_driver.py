"""What every sensor driver is: the quantities it measures, its units and its read.

A driver is a plain synchronous class; its transport (an I2C bus, a sysfs directory) runs it on
that transport's worker thread, so a driver may block for a conversion (a BME280 forced
measurement, a DS18B20's 750 ms) without stalling the event loop.

Drivers declare their quantities with plausible bounds. :func:`check_values` turns a value
outside them into :class:`~clawseed_edge.api.SensorDataInvalid`: a BME280 that reads -145 C is
broken or miswired, and the model must not repeat the number as if it were weather.

It sits below every transport: ``i2c/drivers`` and ``sysfs/`` import it, and ``sensors/`` (the
bank, its config and tools) builds on them, so no driver points back up at the bank.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Protocol, runtime_checkable

from clawseed_edge.api import SensorDataInvalid

__all__ = [
    "DisplayDriver",
    "Quantity",
    "Reading",
    "SensorDriver",
    "Transport",
    "check_values",
]

Transport = Literal["i2c", "w1", "iio"]


@dataclass(frozen=True, slots=True)
class Quantity:
    """One measured quantity of a sensor.

    Attributes:
        name: ``temperature``, ``humidity``, ``pressure``, ``illuminance``, ``voltage_a0`` ...
        unit: The unit shown to the model and the user: ``°C``, ``%RH``, ``hPa``, ``lx``, ``V``.
        low: The lowest value the sensor can physically report (its datasheet's range).
        high: The highest value it can physically report.
        decimals: Digits after the point worth showing (the sensor's resolution).
    """

    name: str
    unit: str
    low: float
    high: float
    decimals: int = 1


@dataclass(frozen=True, slots=True)
class Reading:
    """Values read from one sensor at one moment.

    Attributes:
        sensor: The configured sensor name.
        values: Quantity name -> value, in the quantity's unit.
        units: Quantity name -> unit.
        time: When it was read, Unix seconds.
        cached: True when this is an earlier reading returned within the sensor's minimum
            interval rather than a new conversion.
        decimals: Quantity name -> digits worth showing.
    """

    sensor: str
    values: Mapping[str, float]
    units: Mapping[str, str]
    time: float
    cached: bool = False
    decimals: Mapping[str, int] = field(default_factory=dict)

    def format_value(self, name: str) -> str:
        """``"21.5 °C"`` for one quantity."""
        digits = self.decimals.get(name, 1)
        return f"{self.values[name]:.{digits}f} {self.units[name]}"

    def text(self) -> str:
        """One line for the model: every value with its unit, and the time read."""
        parts = [f"{name} {self.format_value(name)}" for name in self.values]
        clock = time.strftime("%H:%M:%S", time.localtime(self.time))
        when = f"read at {clock}" + (
            ", cached: the sensor's minimum interval" if self.cached else ""
        )
        return f"{self.sensor}: {', '.join(parts)} ({when})"

    def as_data(self) -> dict[str, Any]:
        """Plain data for programmatic consumers (status, gateway, tests)."""
        return {
            "sensor": self.sensor,
            "values": dict(self.values),
            "units": dict(self.units),
            "time": self.time,
            "cached": self.cached,
        }


@runtime_checkable
class SensorDriver(Protocol):
    """A sensor chip or kernel device that produces values.

    Class attributes describe the driver so that config validation, tool schemas and the
    registry need no instance. I2C drivers are built as ``cls(bus, address)``, sysfs drivers
    as ``cls(path)``.

    Attributes:
        driver_name: The name used in config (``driver = "bme280"``).
        transport: ``i2c``, ``w1`` (1-Wire through sysfs) or ``iio`` (kernel IIO through sysfs).
        quantities: What one :meth:`read` returns.
        min_interval_s: Readings closer than this are served from the last one (seconds).
        addresses: For I2C: the addresses the chip can be strapped to, default first.
        summary: One line for docs and ``--help``.

    Two optional methods, for a chip that can measure on its own (a BME280's normal mode):
    ``sampled_every(interval_s: float | None)``, told by the bank how often a reader will
    read it (None: only when asked; no bus access there), and ``sleep()``, called on the
    bus's worker at close and on an emergency stop to stop that mode.
    """

    driver_name: ClassVar[str]
    transport: ClassVar[Transport]
    quantities: ClassVar[tuple[Quantity, ...]]
    min_interval_s: ClassVar[float]
    addresses: ClassVar[tuple[int, ...]]
    summary: ClassVar[str]

    def setup(self) -> None:
        """Check the chip's identity and load its calibration. Blocking; worker thread only."""
        ...

    def read(self) -> dict[str, float]:
        """One new measurement, compensated, in the quantities' units. Blocking.

        Raises:
            SensorDataInvalid: A failed CRC, an impossible value, a power-on placeholder.
            OSError: From the transport; the transport translates it.
        """
        ...


@runtime_checkable
class DisplayDriver(Protocol):
    """A character display: ``columns`` x ``rows`` cells."""

    driver_name: ClassVar[str]
    transport: ClassVar[Transport]
    addresses: ClassVar[tuple[int, ...]]
    columns: ClassVar[int]
    rows: ClassVar[int]
    summary: ClassVar[str]

    def setup(self) -> None:
        """Initialise the controller and clear the screen. Blocking."""
        ...

    def show(self, lines: list[str]) -> None:
        """Replace the screen with ``lines`` (at most ``rows``, each at most ``columns``)."""
        ...


def check_values(
    driver: str, quantities: tuple[Quantity, ...], values: Mapping[str, float]
) -> dict[str, float]:
    """``values`` rounded to each quantity's resolution, after checking them.

    Raises:
        SensorDataInvalid: A value is missing, not finite or outside the quantity's physical
            range (the message names the driver, the quantity and the range).
    """
    out: dict[str, float] = {}
    for q in quantities:
        value = values.get(q.name)
        if value is None or not math.isfinite(value):
            raise SensorDataInvalid(f"{driver}: no valid {q.name} in the reading ({value!r})")
        if not q.low <= value <= q.high:
            raise SensorDataInvalid(
                f"{driver}: {q.name} {value:.{q.decimals}f} {q.unit} is outside what the sensor "
                f"can measure ({q.low:g}..{q.high:g} {q.unit}); the chip is faulty, miswired or "
                "not the configured one"
            )
        out[q.name] = round(value, q.decimals + 1)
    return out

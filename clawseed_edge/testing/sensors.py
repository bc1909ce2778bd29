"""Simulated sensor banks from TOML snippets, for tests (ours and users')."""

from __future__ import annotations

import time
import tomllib
from collections.abc import Callable, Sequence

from clawseed_edge.api import ConfigInvalid
from clawseed_edge.peripherals.sensors.bank import SensorBank
from clawseed_edge.peripherals.sensors.config import parse_sensor_tables, validate_sensors
from clawseed_edge.peripherals.sensors.registry import DriverRegistry, default_driver_registry

__all__ = ["set_sensor", "sim_sensor_bank"]


def sim_sensor_bank(
    sensors_toml: str,
    *,
    name: str = "sensors",
    registry: DriverRegistry | None = None,
    taken_names: Sequence[str] = (),
    source: str = "<sensors>",
    clock: Callable[[], float] | None = None,
) -> SensorBank:
    """A simulated (not yet connected) :class:`SensorBank` for ``[[sensors]]``/``[[displays]]``.

    ``clock`` (seconds) replaces the monotonic clock of the reading cache, so a test that
    drives a sampler with a fake clock gets a new reading at each interval.

    Raises:
        ConfigInvalid: The snippet is not valid TOML or the tables are wrong.
    """
    try:
        data = tomllib.loads(sensors_toml)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigInvalid(f"not valid TOML: {exc}", file=source) from exc
    registry = registry or default_driver_registry()
    sensors, displays, settings = parse_sensor_tables(data, source)
    valid = validate_sensors(sensors, displays, registry, taken_names=taken_names, source=source)
    return SensorBank(
        valid,
        settings=settings,
        sim=True,
        name=name,
        registry=registry,
        clock=clock if clock is not None else time.monotonic,
    )


def set_sensor(bank: SensorBank, target: str, value: float) -> None:
    """What ``clawseed-edge sim set`` does in a running service, for your own tests:
    ``set_sensor(bank, "greenhouse.temperature", 31.0)``; the next read measures it.

    Raises:
        ToolArgumentsInvalid: Not ``SENSOR.QUANTITY``, an unknown quantity, not a number.
        DeviceNotFound: No such sensor (or the bank is not connected yet).
    """
    bank.sim_set(target, value)

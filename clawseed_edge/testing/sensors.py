"""Simulated sensor banks from TOML snippets, for tests (ours and users')."""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Sequence

from clawseed_edge.api import ConfigInvalid
from clawseed_edge.peripherals.sensors.bank import SensorBank
from clawseed_edge.peripherals.sensors.config import parse_sensor_tables, validate_sensors
from clawseed_edge.peripherals.sensors.registry import DriverRegistry, default_driver_registry

__all__ = ["sim_sensor_bank"]


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
    extra = {} if clock is None else {"clock": clock}
    return SensorBank(valid, settings=settings, sim=True, name=name, registry=registry, **extra)

"""Building a :class:`~.bank.SensorBank` from the config's tables and the board's wiring."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from clawseed_edge.api import ClawseedError

from .bank import SensorBank
from .config import I2CSettings, SensorConfig, validate_sensors
from .registry import DriverRegistry, default_driver_registry

__all__ = ["i2c_pins_used_by", "sensor_bank_from_config"]

I2C_PIN_CAPS = ("i2c_sda", "i2c_scl")


def i2c_pins_used_by(board: Any, devices: Sequence[Any]) -> dict[str, str]:
    """Board pins that are I2C bus 1's SDA/SCL and that GPIO ``devices`` are wired to.

    Args:
        board: A :class:`~clawseed_edge.peripherals.boards.BoardSpec` (or None: no check).
        devices: GPIO device configs with ``name`` and ``pin``.

    Returns:
        Canonical pin name -> device name. Pins the board does not know are left to the GPIO
        validation, which names them better.
    """
    used: dict[str, str] = {}
    if board is None:
        return used
    for dev in devices:
        try:
            pin = board.lookup(dev.pin)
        except ClawseedError:
            continue
        if any(pin.can(cap) for cap in I2C_PIN_CAPS):
            used[pin.name] = dev.name
    return used


def sensor_bank_from_config(
    sensors: Sequence[SensorConfig],
    displays: Sequence[SensorConfig],
    settings: I2CSettings,
    *,
    sim: bool,
    board: Any = None,
    gpio_devices: Sequence[Any] = (),
    registry: DriverRegistry | None = None,
    source: str = "config.toml",
    name: str = "sensors",
) -> SensorBank | None:
    """The bank for the configured sensors and displays, or None when there are none.

    Raises:
        ConfigInvalid: See :func:`~.config.validate_sensors`; I2C pins used by GPIO devices are
            found on ``board``.
    """
    if not sensors and not displays:
        return None
    registry = registry or default_driver_registry()
    valid = validate_sensors(
        sensors,
        displays,
        registry,
        taken_names=[d.name for d in gpio_devices],
        i2c_pins_in_use=i2c_pins_used_by(board, gpio_devices),
        source=source,
    )
    board_type = getattr(board, "id", "sim")
    return SensorBank(
        valid, settings=settings, sim=sim, name=name, board_type=board_type, registry=registry
    )

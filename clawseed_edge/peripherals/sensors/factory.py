"""Building a :class:`~.bank.SensorBank` from the config's tables and the board's wiring."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import msgspec

from clawseed_edge.api import ClawseedError, ConfigInvalid, Peripheral

from .bank import SensorBank
from .config import I2CSettings, SensorConfig, validate_sensors
from .registry import DriverRegistry, default_driver_registry

__all__ = [
    "SENSORS",
    "SensorBankFactory",
    "SensorBankSettings",
    "i2c_pins_used_by",
    "sensor_bank_from_config",
]

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


class SensorBankSettings(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, frozen=True):
    """A ``[[peripherals]]`` table of type ``sensors``: a sensor bank of its own.

    ::

        [[peripherals]]
        name = "shed_sensors"
        type = "sensors"
        board = "rpi4b"                 # or "sim": simulated chips and sysfs
        i2c = { raw_access = false }

        [[peripherals.sensors]]         # the keys of a top-level [[sensors]] table
        name = "shed"
        driver = "sht31"

    Attributes:
        name: The peripheral's name, unique in the config.
        type: Always ``sensors``.
        board: The board id the buses are on; ``sim`` simulates every chip.
        sensors: ``[[peripherals.sensors]]`` tables.
        displays: ``[[peripherals.displays]]`` tables.
        i2c: Bus-wide settings (``raw_access``, ``attempts``).
    """

    name: str
    type: Literal["sensors"]
    board: str = "sim"
    sensors: tuple[SensorConfig, ...] = ()
    displays: tuple[SensorConfig, ...] = ()
    i2c: I2CSettings = msgspec.field(default_factory=I2CSettings)


class SensorBankFactory:
    """The ``sensors`` peripheral type of :mod:`clawseed_edge.peripherals.registry`."""

    settings = SensorBankSettings

    def create(
        self, settings: SensorBankSettings, *, sim: bool = False, source: str, key: str
    ) -> Peripheral:
        """An unconnected :class:`SensorBank`; ``sim`` (or the ``sim`` board) simulates it.

        Raises:
            BoardNotFound: Unknown board id.
            ConfigInvalid: See :func:`~.config.validate_sensors` (keys under ``key``).
        """
        from clawseed_edge.peripherals.boards import default_registry as boards

        board = boards().get(settings.board)
        try:
            bank = sensor_bank_from_config(
                settings.sensors,
                settings.displays,
                settings.i2c,
                sim=sim or board.family == "sim",
                board=board,
                source=source,
                name=settings.name,
            )
        except ConfigInvalid as exc:
            if exc.key is None:
                raise
            message = str(exc).removeprefix(f"{source}: {exc.key}: ")
            raise ConfigInvalid(message, file=source, key=f"{key}.{exc.key}") from exc
        if bank is None:
            raise ConfigInvalid(
                "a sensors peripheral needs [[peripherals.sensors]] or [[peripherals.displays]]",
                file=source,
                key=key,
            )
        return bank

    def devices(self, settings: SensorBankSettings) -> Sequence[str]:
        return [s.name for s in (*settings.sensors, *settings.displays)]


#: The factory of the built-in ``sensors`` type (``registry.default_registry`` loads it by name).
SENSORS = SensorBankFactory()

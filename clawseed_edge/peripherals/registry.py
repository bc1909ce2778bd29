"""Peripheral factories by type, with plugins, and the ``[[peripherals]]`` tables they read.

A ``[[peripherals]]`` table names its ``type``; the factory registered under that type owns the
rest of the table: it validates it with its own msgspec Struct (errors name the file and the
key, ``peripherals[1].board``), lists the devices it declares (device names are unique across
the whole config), and builds the peripheral. Built-in: ``pi_gpio`` (a Pi header through
gpiozero), ``nucleo`` (a Nucleo over USB serial, docs/nucleo.md) and ``sensors`` (I2C and
sysfs sensors and displays, docs/sensors.md). Third-party
packages add types through the entry-point group ``clawseed_edge.peripherals``
(``my_board = "package.module:factory"``, the value a :class:`PeripheralFactory`), found by
the one plugin registry (:mod:`clawseed_edge.api.plugins`, docs/plugins.md); entry points are
read only when a type is not registered, so a plain start never scans them::

    [[peripherals]]
    name = "bench"
    type = "pi_gpio"
    board = "sim"

    [[peripherals.devices]]
    name = "bench_led"
    pin = "GPIO17"
    kind = "led"
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import msgspec

from clawseed_edge.api import ConfigInvalid, Peripheral
from clawseed_edge.api.plugins import PLUGIN_GROUPS, PluginRegistry

__all__ = [
    "BUILT_IN",
    "ENTRY_POINT_GROUP",
    "PeripheralFactory",
    "PeripheralFactoryRegistry",
    "PeripheralTable",
    "default_registry",
    "explain_validation_error",
]

ENTRY_POINT_GROUP = PLUGIN_GROUPS["peripherals"]


class PeripheralFactory(Protocol):
    """How one ``type`` of ``[[peripherals]]`` table becomes a peripheral.

    Attributes:
        settings: The msgspec Struct of the whole table (``name`` and ``type`` included); it
            should forbid unknown fields.
    """

    settings: type[Any]

    def create(self, settings: Any, *, sim: bool, source: str, key: str) -> Peripheral:
        """An unconnected Peripheral; ``sim`` forces simulation (``--sim``), ``source`` and
        ``key`` (``peripherals[0]``) are for error messages."""
        ...

    def devices(self, settings: Any) -> Sequence[str]:
        """The device names the table declares (checked for uniqueness at load)."""
        ...


class PeripheralTable(msgspec.Struct, frozen=True):
    """A validated ``[[peripherals]]`` table: its factory, typed settings and config key."""

    name: str
    type: str
    factory: PeripheralFactory
    settings: Any
    key: str

    def device_names(self) -> list[str]:
        return list(self.factory.devices(self.settings))

    def create(self, *, sim: bool = False, source: str = "config.toml") -> Peripheral:
        """Build the (unconnected) peripheral; wiring errors name ``source`` and the key."""
        return self.factory.create(self.settings, sim=sim, source=source, key=self.key)


class PeripheralFactoryRegistry(PluginRegistry[PeripheralFactory]):
    """Types -> peripheral factories: the one plugin registry
    (:class:`~clawseed_edge.api.plugins.PluginRegistry`) for the kind ``peripherals``.

    Args:
        load_entry_points: Look up unknown types in the ``clawseed_edge.peripherals`` group.
    """

    def __init__(self, *, load_entry_points: bool = True) -> None:
        super().__init__(
            "peripherals", noun="peripheral type", load_entry_points=load_entry_points, key="type"
        )

    def get(  # type: ignore[override]
        self, type_: str, *, source: str | None = None, key: str = "type"
    ) -> PeripheralFactory:
        """The factory for ``type_``, loading it from an entry point if not registered.

        Raises:
            ConfigInvalid: No factory of that type (the message lists the known ones), or its
                plugin does not load.
        """
        return super().get(type_, file=source, key=key)

    def parse(self, table: Any, *, source: str, index: int) -> PeripheralTable:
        """Validate one ``[[peripherals]]`` table with its type's settings Struct.

        Raises:
            ConfigInvalid: Not a table, no/unknown ``type``, or the factory's Struct rejects a
                key (the message names ``source`` and ``peripherals[index].key``).
        """
        where = f"peripherals[{index}]"
        if not isinstance(table, Mapping):
            raise ConfigInvalid(
                "each [[peripherals]] entry must be a table", file=source, key=where
            )
        type_ = table.get("type")
        if not isinstance(type_, str) or not type_:
            raise ConfigInvalid(
                f"a peripheral needs a type: one of {', '.join(self.names())}",
                file=source,
                key=f"{where}.type",
            )
        factory = self.get(type_, source=source, key=f"{where}.type")
        try:
            settings = msgspec.convert(dict(table), factory.settings)
        except msgspec.ValidationError as exc:
            message, key = explain_validation_error(exc)
            raise ConfigInvalid(
                message, file=source, key=f"{where}.{key}" if key else where
            ) from exc
        return PeripheralTable(str(settings.name), type_, factory, settings, where)


def explain_validation_error(exc: msgspec.ValidationError) -> tuple[str, str]:
    """(message, dotted key) from msgspec's ``"... - at `$.devices[0]`"`` text."""
    text = str(exc)
    message, _, key = text.partition(" - at `$")
    key = key.rstrip("`").lstrip(".")
    if message.startswith("Object contains unknown field `"):
        field = message.split("`")[1]
        key = f"{key}.{field}" if key else field
        message = f"unknown key {field!r} (check the spelling; see docs/hardware.md)"
    elif message.startswith("Object missing required field `"):
        field = message.split("`")[1]
        key = f"{key}.{field}" if key else field
        message = f"missing required key {field!r}"
    return message, key


#: The built-in types, each imported when a table names it (a Pi header's table does not load
#: the Nucleo driver or the sensor bank).
BUILT_IN = {
    "pi_gpio": "clawseed_edge.peripherals.gpio.factory:PI_GPIO",
    "nucleo": "clawseed_edge.peripherals.serial.factory:NUCLEO",
    "sensors": "clawseed_edge.peripherals.sensors.factory:SENSORS",
}


def default_registry() -> PeripheralFactoryRegistry:
    """A registry with the built-in types (imported on first use; plugins load on demand)."""
    registry = PeripheralFactoryRegistry()
    for type_, path in BUILT_IN.items():
        registry.register(type_, path)
    return registry

"""Peripheral factories by type, with plugins, and the ``[[peripherals]]`` tables they read.

A ``[[peripherals]]`` table names its ``type``; the factory registered under that type owns the
rest of the table: it validates it with its own msgspec Struct (errors name the file and the
key, ``peripherals[1].board``), lists the devices it declares (device names are unique across
the whole config), and builds the peripheral. Built-in: ``pi_gpio`` (a Pi header through
gpiozero), ``nucleo`` (a Nucleo over USB serial, docs/nucleo.md) and ``sensors`` (I2C and
sysfs sensors and displays, docs/sensors.md). Third-party
packages add types through the entry-point group ``clawseed_edge.peripherals``
(``my_board = "package.module:factory"``, the value a :class:`PeripheralFactory`); entry
points are read only when a type is not registered, so a plain start never scans them::

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
from dataclasses import dataclass
from typing import Any, Protocol

import msgspec

from clawseed_edge.api import ConfigInvalid, Peripheral

from .gpio.factory import PiGpioFactory
from .sensors.factory import SensorBankFactory
from .serial.factory import NucleoFactory

__all__ = [
    "ENTRY_POINT_GROUP",
    "PeripheralFactory",
    "PeripheralFactoryRegistry",
    "PeripheralTable",
    "default_registry",
    "explain_validation_error",
]

ENTRY_POINT_GROUP = "clawseed_edge.peripherals"


def entry_points(group: str) -> Any:
    """``importlib.metadata.entry_points``, imported only when an unknown name is looked up
    (the module and its email/zipfile imports cost about 2 MB of an idle service)."""
    from importlib.metadata import entry_points as installed

    return installed(group=group)


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


@dataclass(frozen=True, slots=True)
class PeripheralTable:
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


class PeripheralFactoryRegistry:
    """Types -> peripheral factories, with lazy entry-point plugins.

    Args:
        load_entry_points: Look up unknown types in the ``clawseed_edge.peripherals`` group.
    """

    def __init__(self, *, load_entry_points: bool = True) -> None:
        self._factories: dict[str, PeripheralFactory] = {}
        self._load_entry_points = load_entry_points

    def register(self, type_: str, factory: PeripheralFactory) -> None:
        """Register ``factory`` for ``type_``; replaces an earlier one."""
        self._factories[type_] = factory

    def names(self) -> list[str]:
        """Registered types, sorted (entry points not yet loaded are not listed)."""
        return sorted(self._factories)

    def __contains__(self, type_: object) -> bool:
        return isinstance(type_, str) and type_ in self._factories

    def get(self, type_: str, *, source: str | None = None, key: str = "type") -> PeripheralFactory:
        """The factory for ``type_``, loading it from an entry point if not registered.

        Raises:
            ConfigInvalid: No factory of that type (the message lists the known ones).
        """
        factory = self._factories.get(type_)
        if factory is None and self._load_entry_points:
            factory = self._from_entry_point(type_, source, key)
        if factory is None:
            raise ConfigInvalid(
                f"unknown peripheral type {type_!r}: use one of {', '.join(self.names())} or "
                f"install a plugin that registers it in the entry-point group "
                f"{ENTRY_POINT_GROUP!r}",
                file=source,
                key=key,
            )
        return factory

    def _from_entry_point(
        self, type_: str, source: str | None, key: str
    ) -> PeripheralFactory | None:
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            if ep.name == type_:
                try:
                    factory = ep.load()
                except Exception as exc:
                    raise ConfigInvalid(
                        f"peripheral plugin {type_!r} ({ep.value}) failed to load: {exc}",
                        file=source,
                        key=key,
                    ) from exc
                self._factories[type_] = factory
                return factory  # type: ignore[no-any-return]
        return None

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


def default_registry() -> PeripheralFactoryRegistry:
    """A registry with the built-in types (plugins load on demand)."""
    registry = PeripheralFactoryRegistry()
    registry.register("pi_gpio", PiGpioFactory())
    registry.register("nucleo", NucleoFactory())
    registry.register("sensors", SensorBankFactory())
    return registry

"""Sensor and display drivers by name: the built-ins, and plugins through entry points.

A driver is a class with the attributes of :class:`~.driver.SensorDriver` (or
:class:`~.driver.DisplayDriver`). Built-ins are named here by import path and imported only
when used; third-party packages add drivers to the entry-point group ``clawseed_edge.sensors``
(``mychip = "my_package.mychip:MyChip"``), which is read only when a name is not built in (or
when the full list is needed for an error message), as providers do.

A driver may name its simulated model with a class attribute ``sim_model`` (an import path of
a callable that returns a model); the built-ins' models are listed here.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from clawseed_edge.api import ConfigInvalid

__all__ = ["ENTRY_POINT_GROUP", "DriverRegistry", "default_driver_registry", "load_object"]

ENTRY_POINT_GROUP = "clawseed_edge.sensors"


def entry_points(group: str) -> Any:
    """``importlib.metadata.entry_points``, imported only when an unknown name is looked up
    (the module and its email/zipfile imports cost about 2 MB of an idle service)."""
    from importlib.metadata import entry_points as installed

    return installed(group=group)


_I2C = "clawseed_edge.peripherals.i2c"
_SYSFS = "clawseed_edge.peripherals.sysfs"
BUILTIN_DRIVERS: dict[str, str] = {
    "bme280": f"{_I2C}.drivers.bme280:BME280",
    "sht31": f"{_I2C}.drivers.sht31:SHT31",
    "bh1750": f"{_I2C}.drivers.bh1750:BH1750",
    "ads1115": f"{_I2C}.drivers.ads1115:ADS1115",
    "hd44780": f"{_I2C}.drivers.hd44780:HD44780",
    "ssd1306": f"{_I2C}.drivers.ssd1306:SSD1306",
    "ds18b20": f"{_SYSFS}.w1:DS18B20",
    "dht22": f"{_SYSFS}.iio:DHT22",
    "dht11": f"{_SYSFS}.iio:DHT11",
}
ALIASES: dict[str, str] = {
    "sht30": "sht31",
    "sht35": "sht31",
    "am2302": "dht22",
    "lcd1602": "hd44780",
    "pcf8574_lcd": "hd44780",
}
BUILTIN_MODELS: dict[str, str] = {
    "bme280": f"{_I2C}.sim.bme280:BME280Model",
    "sht31": f"{_I2C}.sim.sht31:SHT31Model",
    "bh1750": f"{_I2C}.sim.bh1750:BH1750Model",
    "ads1115": f"{_I2C}.sim.ads1115:ADS1115Model",
    "hd44780": f"{_I2C}.sim.hd44780:HD44780Model",
    "ssd1306": f"{_I2C}.sim.ssd1306:SSD1306Model",
}


def load_object(path: str) -> Any:
    """The object at ``"package.module:attribute"``."""
    module, _, attribute = path.partition(":")
    return getattr(importlib.import_module(module), attribute)


class DriverRegistry:
    """Driver names (and aliases) -> driver classes, loaded on first use.

    Args:
        load_entry_points: Look unknown names up in the ``clawseed_edge.sensors`` group.
    """

    def __init__(self, *, load_entry_points: bool = True) -> None:
        self._paths: dict[str, str] = {}
        self._classes: dict[str, type[Any]] = {}
        self._aliases: dict[str, str] = {}
        self._load_entry_points = load_entry_points

    def register(
        self, name: str, driver: type[Any] | str, *, aliases: tuple[str, ...] = ()
    ) -> None:
        """Register a driver class (or its import path) under ``name``; replaces an earlier one."""
        if isinstance(driver, str):
            self._paths[name] = driver
            self._classes.pop(name, None)
        else:
            self._classes[name] = driver
        for alias in aliases:
            self._aliases[alias] = name

    def canonical(self, name: str) -> str:
        """The registered name an alias stands for."""
        return self._aliases.get(name, name)

    def names(self) -> list[str]:
        """Every driver name: registered ones, their aliases and installed plugins, sorted."""
        names = {*self._paths, *self._classes, *self._aliases}
        if self._load_entry_points:
            names.update(ep.name for ep in entry_points(group=ENTRY_POINT_GROUP))
        return sorted(names)

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        key = self.canonical(name)
        return key in self._classes or key in self._paths or self._entry_point(key) is not None

    def get(self, name: str) -> type[Any]:
        """The driver class for ``name``.

        Raises:
            ConfigInvalid: No such driver (the message lists every known one), or its plugin
                failed to import.
        """
        key = self.canonical(name)
        cls = self._classes.get(key)
        if cls is not None:
            return cls
        path = self._paths.get(key)
        if path is None:
            ep = self._entry_point(key)
            if ep is None:
                raise ConfigInvalid(
                    f"unknown sensor driver {name!r}: use one of {', '.join(self.names())}, or "
                    f"install a plugin that registers it in the entry-point group "
                    f"{ENTRY_POINT_GROUP!r}",
                    key="driver",
                )
            path = ep.value
        try:
            loaded: type[Any] = load_object(path)
        except (ImportError, AttributeError) as exc:
            raise ConfigInvalid(
                f"sensor driver {name!r} ({path}) failed to load: {exc}", key="driver"
            ) from exc
        self._classes[key] = loaded
        return loaded

    def sim_model(self, name: str) -> Callable[..., Any] | None:
        """The factory of ``name``'s simulated model, or None when it has none."""
        key = self.canonical(name)
        path = getattr(self.get(name), "sim_model", None) or BUILTIN_MODELS.get(key)
        return load_object(path) if isinstance(path, str) else path

    def _entry_point(self, name: str) -> Any:
        if not self._load_entry_points:
            return None
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            if ep.name == name:
                return ep
        return None


def default_driver_registry() -> DriverRegistry:
    """A registry of the built-in drivers and their aliases (plugins load on demand)."""
    registry = DriverRegistry()
    for name, path in BUILTIN_DRIVERS.items():
        aliases = tuple(alias for alias, target in ALIASES.items() if target == name)
        registry.register(name, path, aliases=aliases)
    return registry

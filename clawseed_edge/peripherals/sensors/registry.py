"""Sensor and display drivers by name: the built-ins, and plugins through entry points.

A driver is a class with the attributes of :class:`~.driver.SensorDriver` (or
:class:`~.driver.DisplayDriver`). Built-ins are named here by import path and imported only
when used; third-party packages add drivers to the entry-point group ``clawseed_edge.sensors``
(``mychip = "my_package.mychip:MyChip"``), which is read only when a name is not built in (or
when the full list is needed for an error message): the one plugin registry of every kind
(:mod:`clawseed_edge.api.plugins`, docs/plugins.md).

A driver may name its simulated model with a class attribute ``sim_model`` (an import path of
a callable that returns a model); the built-ins' models are listed here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from clawseed_edge.api.plugins import PLUGIN_GROUPS, PluginRegistry, load_object

__all__ = ["ENTRY_POINT_GROUP", "DriverRegistry", "default_driver_registry", "load_object"]

ENTRY_POINT_GROUP = PLUGIN_GROUPS["sensors"]


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


class DriverRegistry(PluginRegistry[type[Any]]):
    """Driver names (and aliases) -> driver classes, loaded on first use: the one plugin
    registry (:class:`~clawseed_edge.api.plugins.PluginRegistry`) for the kind ``sensors``.

    Args:
        load_entry_points: Look unknown names up in the ``clawseed_edge.sensors`` group.
    """

    def __init__(self, *, load_entry_points: bool = True) -> None:
        super().__init__(
            "sensors", noun="sensor driver", load_entry_points=load_entry_points, key="driver"
        )

    def names(self) -> list[str]:
        """Every driver name: registered ones, their aliases and installed plugins, sorted
        (reads the entry-point group: for messages and listings, not for a plain start)."""
        return self.available()

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and (super().__contains__(name) or name in self.names())

    def sim_model(self, name: str) -> Callable[..., Any] | None:
        """The factory of ``name``'s simulated model, or None when it has none."""
        key = self.canonical(name)
        path = getattr(self.get(name), "sim_model", None) or BUILTIN_MODELS.get(key)
        return load_object(path) if isinstance(path, str) else path


def default_driver_registry() -> DriverRegistry:
    """A registry of the built-in drivers and their aliases (plugins load on demand)."""
    registry = DriverRegistry()
    for name, path in BUILTIN_DRIVERS.items():
        aliases = tuple(alias for alias, target in ALIASES.items() if target == name)
        registry.register(name, path, aliases=aliases)
    return registry

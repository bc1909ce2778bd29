"""Home Assistant's device classes and the units each accepts, as this node emits them.

From HA's documentation of the sensor, binary-sensor and switch device classes: a sensor with a
class and a unit HA does not list for it is rejected by a current HA ("will stop working in
2025.7"), so :func:`sensor_class` only ever pairs a class with a unit from its row here and
leaves the class out otherwise (the value still shows, with its unit).
"""

from __future__ import annotations

from clawseed_edge.peripherals.wired.ha_device_class import (
    BINARY_SENSOR_CLASSES,
    SWITCH_CLASSES,
    SWITCH_KINDS,
)

__all__ = [
    "BINARY_SENSOR_CLASSES",
    "SENSOR_UNITS",
    "SWITCH_CLASSES",
    "SWITCH_KINDS",
    "ha_unit",
    "sensor_class",
]

_PRESSURE = ("cbar", "bar", "hPa", "mmHg", "inHg", "kPa", "mbar", "Pa", "psi")
#: Sensor device class -> the units HA accepts for it (the classes this node may emit).
SENSOR_UNITS: dict[str, tuple[str, ...]] = {
    "temperature": ("°C", "°F", "K"),
    "humidity": ("%",),
    "moisture": ("%",),
    "atmospheric_pressure": _PRESSURE,
    "pressure": _PRESSURE,
    "illuminance": ("lx",),
    "voltage": ("V", "mV", "µV", "kV", "MV"),
    "current": ("A", "mA"),
    "power": ("W", "kW", "mW", "MW", "GW", "TW", "BTU/h"),
    "carbon_dioxide": ("ppm",),
    "distance": ("km", "m", "cm", "mm", "mi", "nmi", "yd", "in", "ft"),
}
#: Quantity name -> sensor device class (what it measures, never a guess from a device name).
_QUANTITY_CLASSES = {
    "temperature": "temperature",
    "humidity": "humidity",
    "pressure": "atmospheric_pressure",
    "illuminance": "illuminance",
    "light": "illuminance",
    "lux": "illuminance",
    "voltage": "voltage",
    "current": "current",
    "power": "power",
    "co2": "carbon_dioxide",
    "distance": "distance",
    "moisture": "moisture",
}
#: A quantity with another name (``ain0`` of an ADS1115) is classed by its unit.
_UNIT_CLASSES = {
    "V": "voltage",
    "mV": "voltage",
    "A": "current",
    "mA": "current",
    "lx": "illuminance",
}
#: Our units that HA spells otherwise.
_SPELLINGS = {"%RH": "%", "% RH": "%", "degC": "°C", "uV": "µV"}


def ha_unit(unit: str) -> str:
    """The unit as HA spells it (``%RH`` -> ``%``); other units as they are."""
    return _SPELLINGS.get(unit, unit)


def sensor_class(quantity: str, unit: str | None) -> tuple[str | None, str | None]:
    """(device class, unit) for a quantity read in ``unit``: a pair HA accepts, or no class.

    With no unit the class's first unit is assumed (our drivers' default units are those).
    """
    device_class = _QUANTITY_CLASSES.get(quantity.lower())
    spelled = ha_unit(unit) if unit else None
    if device_class is None and spelled is not None:
        device_class = _UNIT_CLASSES.get(spelled)
    if device_class is None:
        return None, spelled
    allowed = SENSOR_UNITS[device_class]
    if spelled is None:
        return device_class, allowed[0]
    if spelled in allowed:
        return device_class, spelled
    return None, spelled  # a unit HA has not for that class: shown, not classed

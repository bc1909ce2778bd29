"""Sensors of every transport as one peripheral: the bank, its config, its tools and simulation.

The driver base (quantities with units, readings, the driver protocol) lives below in
:mod:`clawseed_edge.peripherals.sensor_driver`; its names are re-exported here for plugins.

They are imported on first use: reading ``[[sensors]]`` costs the config module only.
"""

import typing

from clawseed_edge.api.lazy import lazy_face as _lazy_face

if typing.TYPE_CHECKING:
    from ..sensor_driver import (
        DisplayDriver,
        Quantity,
        Reading,
        SensorDriver,
        Transport,
        check_values,
    )

__all__ = ["DisplayDriver", "Quantity", "Reading", "SensorDriver", "Transport", "check_values"]

_LAZY = {
    "DisplayDriver": "..sensor_driver",
    "Quantity": "..sensor_driver",
    "Reading": "..sensor_driver",
    "SensorDriver": "..sensor_driver",
    "Transport": "..sensor_driver",
    "check_values": "..sensor_driver",
}


__getattr__, __dir__ = _lazy_face(__name__, _LAZY, __all__)

"""Sensors of every transport as one peripheral: the bank, its config, its tools and simulation.

The driver base (quantities with units, readings, the driver protocol) lives below in
:mod:`clawseed_edge.peripherals.sensor_driver`; its names are re-exported here for plugins.
"""

from ..sensor_driver import DisplayDriver, Quantity, Reading, SensorDriver, Transport, check_values

__all__ = ["DisplayDriver", "Quantity", "Reading", "SensorDriver", "Transport", "check_values"]

"""What sensors of every transport share: quantities with units, readings, the driver protocol."""

from .driver import DisplayDriver, Quantity, Reading, SensorDriver, Transport, check_values

__all__ = ["DisplayDriver", "Quantity", "Reading", "SensorDriver", "Transport", "check_values"]

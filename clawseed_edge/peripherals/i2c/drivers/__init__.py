"""I2C chip drivers, one module per chip, each written from its datasheet.

Drivers are synchronous classes that talk to an SMBus-like bus (:mod:`..smbus`); the bus's
worker thread runs them. Modules are imported on demand (the registry names them by path).
"""

__all__: list[str] = []

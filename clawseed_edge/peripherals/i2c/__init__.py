"""I2C: the bus over smbus2 (``/dev/i2c-N``), chip drivers, and a register-level simulated bus.

* :class:`I2CBus`: one bus, one worker thread, bounded retries, errors that say what to do.
* :mod:`.drivers`: one module per chip, written from its datasheet.
* :mod:`.sim`: :class:`~.sim.SimI2CBus` and the chip models the same drivers run against.

smbus2 is imported when a real bus is opened, not when this package is.
"""

from .bus import SCAN_RANGE, I2CBus, smbus2_opener
from .smbus import SMBusLike

__all__ = ["SCAN_RANGE", "I2CBus", "SMBusLike", "smbus2_opener"]

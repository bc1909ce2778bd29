"""ROHM BH1750FVI: ambient light in lux.

Written from the BH1750FVI datasheet: power on (0x01), continuous high-resolution mode (0x10,
1 lx resolution, at most 180 ms per measurement), a two-byte big-endian result, and
lux = count / 1.2 at the default measurement time (MTreg = 69). The datasheet's worked
example: high byte 1000_0011, low byte 1001_0000 -> (2^15 + 2^9 + 2^8 + 2^7 + 2^4) / 1.2
= 28067 lx.

Continuous mode keeps the latest result in the chip, so a read is one two-byte transfer once
the first conversion (180 ms after :meth:`BH1750.setup`) has finished.
"""

from __future__ import annotations

import time
from typing import ClassVar

from clawseed_edge.api import SensorDataInvalid

from ...sensor_driver import Quantity, Transport, check_values
from ..smbus import SMBusLike, bare_read

__all__ = ["BH1750", "counts_to_lux"]

CMD_POWER_ON = 0x01
CMD_RESET = 0x07
CMD_CONTINUOUS_HIGH_RES = 0x10
MEASURE_MAX_S = 0.18


def counts_to_lux(high: int, low: int) -> float:
    """Lux from the result bytes in H-resolution mode with the default MTreg (datasheet p.7)."""
    return ((high << 8) | low) / 1.2


class BH1750:
    """A BH1750 on an I2C bus in continuous high-resolution mode.

    Args:
        bus: An SMBus-like bus.
        address: 0x23 (ADDR low) or 0x5C (ADDR high).

    Values: illuminance in lux (0..54612, the 16-bit range divided by 1.2).
    """

    driver_name: ClassVar[str] = "bh1750"
    transport: ClassVar[Transport] = "i2c"
    addresses: ClassVar[tuple[int, ...]] = (0x23, 0x5C)
    quantities: ClassVar[tuple[Quantity, ...]] = (
        Quantity("illuminance", "lx", 0.0, 65535 / 1.2, 0),
    )
    min_interval_s: ClassVar[float] = 0.2
    summary: ClassVar[str] = "ROHM BH1750 ambient light in lux (I2C 0x23/0x5C)"

    def __init__(self, bus: SMBusLike, address: int = 0x23) -> None:
        self.bus = bus
        self.address = address
        self._started: float | None = None

    def setup(self) -> None:
        """Power on, reset the data register and start continuous measurement.

        It does not wait for the first result: :meth:`read` waits for whatever is left of the
        180 ms, so starting an agent is not held up by a light sensor.
        """
        self.bus.write_byte(self.address, CMD_POWER_ON)
        self.bus.write_byte(self.address, CMD_RESET)
        self.bus.write_byte(self.address, CMD_CONTINUOUS_HIGH_RES)
        self._started = time.monotonic()

    def read(self) -> dict[str, float]:
        """The latest measurement in lux."""
        if self._started is None:
            self.setup()
        assert self._started is not None
        left = self._started + MEASURE_MAX_S - time.monotonic()
        if left > 0:  # the first conversion is still running
            time.sleep(left)
        # The chip has no registers: the result is a bare two-byte read.
        data = bare_read(self.bus, self.address, 2)
        if len(data) != 2:
            raise SensorDataInvalid(f"bh1750: a result is 2 bytes, got {len(data)}")
        values = {"illuminance": counts_to_lux(data[0], data[1])}
        return check_values(self.driver_name, self.quantities, values)

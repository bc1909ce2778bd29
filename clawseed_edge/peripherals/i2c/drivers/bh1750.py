"""ROHM BH1750FVI: ambient light in lux.

Written from the BH1750FVI datasheet: power on (0x01), reset (0x07), six measurement modes
(continuous 0x10/0x11/0x13, one-time 0x20/0x21/0x23 for H-resolution, H-resolution mode2 and
L-resolution), the measurement-time register MTreg (31..254, default 69; written as two
opcodes, ``01000_hhh`` with bits 7-5 and ``011_lllll`` with bits 4-0), and a two-byte
big-endian result. Lux, from the datasheet:

* H-resolution and L-resolution: lux = count / 1.2 * (69 / MTreg)
* H-resolution mode2 (0.5 lx steps): lux = count / 1.2 * (69 / MTreg) / 2

The worked example: high byte 1000_0011, low byte 1001_0000 in H-resolution at MTreg 69 ->
(2^15 + 2^9 + 2^8 + 2^7 + 2^4) / 1.2 = 28067 lx. A measurement takes at most 180 ms in the
H modes and 24 ms in L mode at MTreg 69, scaled by MTreg / 69.

Continuous modes keep the latest result in the chip, so a read is one two-byte transfer once
the first conversion has finished. A one-time mode measures once and powers the chip down, so
every read sends the mode's opcode again and waits for the measurement.
"""

from __future__ import annotations

import time
from typing import ClassVar, Literal

from clawseed_edge.api import ConfigInvalid, SensorDataInvalid

from ...sensor_driver import Quantity, Transport, check_values
from ..smbus import SMBusLike, bare_read

__all__ = ["BH1750", "MODES", "counts_to_lux", "measurement_time_s", "mtreg_opcodes"]

CMD_POWER_ON = 0x01
CMD_RESET = 0x07
MTREG_DEFAULT = 69
MTREG_RANGE = range(31, 255)

Mode = Literal[
    "continuous_high",
    "continuous_high2",
    "continuous_low",
    "one_time_high",
    "one_time_high2",
    "one_time_low",
]
MODES: dict[str, int] = {
    "continuous_high": 0x10,
    "continuous_high2": 0x11,
    "continuous_low": 0x13,
    "one_time_high": 0x20,
    "one_time_high2": 0x21,
    "one_time_low": 0x23,
}
"""Measurement modes by name -> their opcode (datasheet, instruction set)."""


def counts_to_lux(high: int, low: int, *, mtreg: int = MTREG_DEFAULT, mode2: bool = False) -> float:
    """Lux from the result bytes (datasheet p.7 and p.11): count / 1.2 * 69 / MTreg, halved in
    H-resolution mode2."""
    lux = ((high << 8) | low) / 1.2 * (MTREG_DEFAULT / mtreg)
    return lux / 2 if mode2 else lux


def mtreg_opcodes(mtreg: int) -> tuple[int, int]:
    """The two opcodes that set MTreg: ``01000_hhh`` (bits 7-5), ``011_lllll`` (bits 4-0)."""
    return 0x40 | (mtreg >> 5), 0x60 | (mtreg & 0x1F)


def measurement_time_s(mode: str, mtreg: int = MTREG_DEFAULT) -> float:
    """The longest a measurement takes: 180 ms (H modes) or 24 ms (L) at MTreg 69, scaled."""
    base = 0.024 if mode.endswith("_low") else 0.18
    return base * mtreg / MTREG_DEFAULT


class BH1750:
    """A BH1750 on an I2C bus.

    Args:
        bus: An SMBus-like bus.
        address: 0x23 (ADDR low) or 0x5C (ADDR high).
        mode: One of :data:`MODES`: ``continuous_high`` (default, 1 lx steps),
            ``continuous_high2`` (0.5 lx), ``continuous_low`` (4 lx, 24 ms), or their
            ``one_time_`` forms (the chip sleeps between reads: less power, a wait per read).
        mtreg: The measurement time register, 31..254 (default 69): larger is more sensitive
            (for dim light behind a dark window), smaller reaches brighter light.

    Values: illuminance in lux (0 up to 65535 / 1.2 * 69 / 31, about 121557, at MTreg 31).

    Raises:
        ConfigInvalid: An unknown mode or an MTreg outside 31..254.
    """

    driver_name: ClassVar[str] = "bh1750"
    transport: ClassVar[Transport] = "i2c"
    addresses: ClassVar[tuple[int, ...]] = (0x23, 0x5C)
    quantities: ClassVar[tuple[Quantity, ...]] = (
        Quantity("illuminance", "lx", 0.0, 65535 / 1.2 * MTREG_DEFAULT / MTREG_RANGE[0], 0),
    )
    min_interval_s: ClassVar[float] = 0.2
    summary: ClassVar[str] = "ROHM BH1750 ambient light in lux (I2C 0x23/0x5C)"

    def __init__(
        self,
        bus: SMBusLike,
        address: int = 0x23,
        *,
        mode: Mode = "continuous_high",
        mtreg: int = MTREG_DEFAULT,
    ) -> None:
        if mode not in MODES:
            raise ConfigInvalid(
                f"bh1750: mode {mode!r} is not one of {', '.join(MODES)}", key="options.mode"
            )
        if isinstance(mtreg, bool) or not isinstance(mtreg, int) or mtreg not in MTREG_RANGE:
            raise ConfigInvalid(
                f"bh1750: mtreg {mtreg!r} must be an integer 31..254 (69 is the default)",
                key="options.mtreg",
            )
        self.bus = bus
        self.address = address
        self.mode = mode
        self.mtreg = mtreg
        self._started: float | None = None

    @property
    def one_time(self) -> bool:
        return self.mode.startswith("one_time")

    def setup(self) -> None:
        """Power on, reset the data register, set MTreg and (continuous modes) start measuring.

        It does not wait for the first result: :meth:`read` waits for whatever is left of the
        measurement time, so starting an agent is not held up by a light sensor.
        """
        self.bus.write_byte(self.address, CMD_POWER_ON)
        self.bus.write_byte(self.address, CMD_RESET)
        if self.mtreg != MTREG_DEFAULT:
            for opcode in mtreg_opcodes(self.mtreg):
                self.bus.write_byte(self.address, opcode)
        if not self.one_time:
            self.bus.write_byte(self.address, MODES[self.mode])
        self._started = time.monotonic()

    def read(self) -> dict[str, float]:
        """The latest measurement in lux (one-time modes: a new measurement, then its result)."""
        if self._started is None:
            self.setup()
        if self.one_time:
            # The chip powered down after its last one-time measurement: the opcode wakes it
            # and starts the next one (MTreg survives power-down).
            self.bus.write_byte(self.address, MODES[self.mode])
            self._started = time.monotonic()
        assert self._started is not None
        left = self._started + measurement_time_s(self.mode, self.mtreg) - time.monotonic()
        if left > 0:  # the conversion is still running
            time.sleep(left)
        # The chip has no registers: the result is a bare two-byte read.
        data = bare_read(self.bus, self.address, 2)
        if len(data) != 2:
            raise SensorDataInvalid(f"bh1750: a result is 2 bytes, got {len(data)}")
        lux = counts_to_lux(data[0], data[1], mtreg=self.mtreg, mode2=self.mode.endswith("high2"))
        return check_values(self.driver_name, self.quantities, {"illuminance": lux})

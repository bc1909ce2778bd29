"""Texas Instruments ADS1115: four single-ended analog inputs in volts.

Written from the ADS111x datasheet (SBAS444): the pointer register (0x00 conversion, 0x01
config; section 9.6), the config register's fields (table 8: OS, MUX, PGA, MODE, DR, COMP_*),
the full-scale range and LSB size per gain (table 3), single-shot mode (section 9.4.2: write
OS = 1, wait for OS to read 1 again) and the 16-bit two's-complement result, big-endian.

Full-scale ranges (PGA field -> +/- volts, LSB): 000 6.144 (187.5 uV), 001 4.096 (125 uV),
010 2.048 (62.5 uV), 011 1.024 (31.25 uV), 100 0.512 (15.625 uV), 101..111 0.256 (7.8125 uV).
The input itself must stay within GND - 0.3 V .. VDD + 0.3 V whatever the range.
"""

from __future__ import annotations

import time
from typing import ClassVar

from clawseed_edge.api import ConfigInvalid, SensorDataInvalid

from ...sensor_driver import Quantity, Transport, check_values
from ..smbus import SMBusLike

__all__ = ["ADS1115", "FULL_SCALE", "config_word", "counts_to_volts"]

REG_CONVERSION = 0x00
REG_CONFIG = 0x01

FULL_SCALE: dict[float, int] = {
    6.144: 0b000,
    4.096: 0b001,
    2.048: 0b010,
    1.024: 0b011,
    0.512: 0b100,
    0.256: 0b101,
}
"""Full-scale range in volts -> PGA field (datasheet table 3 and table 8)."""

OS_START = 1 << 15
MODE_SINGLE = 1 << 8
DR_128SPS = 0b100 << 5
COMP_DISABLE = 0b11
CONVERSION_MAX_S = 1 / 128 * 1.1  # one conversion at 128 SPS, plus the oscillator's 10 %


def config_word(channel: int, full_scale: float) -> int:
    """The config register value that starts one single-ended conversion of AIN``channel``
    against GND (MUX 100..111) at ``full_scale`` volts, 128 SPS, comparator off."""
    if channel not in range(4):
        raise ValueError(f"ADS1115 channel {channel} does not exist; it has 0..3")
    mux = 0b100 + channel
    pga = FULL_SCALE[full_scale]
    return OS_START | (mux << 12) | (pga << 9) | MODE_SINGLE | DR_128SPS | COMP_DISABLE


def counts_to_volts(msb: int, lsb: int, full_scale: float) -> float:
    """Volts from the conversion register: two's complement, 32768 counts per full scale."""
    raw = (msb << 8) | lsb
    if raw & 0x8000:
        raw -= 0x10000
    return raw * full_scale / 32768.0


class ADS1115:
    """An ADS1115 on an I2C bus, read single-shot on all four inputs.

    Args:
        bus: An SMBus-like bus.
        address: 0x48 (ADDR to GND), 0x49 (VDD), 0x4A (SDA) or 0x4B (SCL).
        full_scale: The programmable gain as its full-scale range in volts: one of 6.144,
            4.096 (default: covers a 3.3 V signal), 2.048, 1.024, 0.512, 0.256.

    Values: ``ain0``..``ain3`` in volts, single-ended against GND.

    Raises:
        ConfigInvalid: ``full_scale`` is not one of the chip's ranges.
    """

    driver_name: ClassVar[str] = "ads1115"
    transport: ClassVar[Transport] = "i2c"
    addresses: ClassVar[tuple[int, ...]] = (0x48, 0x49, 0x4A, 0x4B)
    quantities: ClassVar[tuple[Quantity, ...]] = tuple(
        Quantity(f"ain{n}", "V", -6.144, 6.144, 4) for n in range(4)
    )
    min_interval_s: ClassVar[float] = 0.1
    summary: ClassVar[str] = "TI ADS1115 4-channel 16-bit ADC in volts (I2C 0x48..0x4B)"

    def __init__(self, bus: SMBusLike, address: int = 0x48, *, full_scale: float = 4.096) -> None:
        if full_scale not in FULL_SCALE:
            ranges = ", ".join(f"{v:g}" for v in FULL_SCALE)
            raise ConfigInvalid(
                f"ads1115: full_scale {full_scale:g} V is not a range of the chip; use one of "
                f"{ranges} (volts)",
                key="full_scale",
            )
        self.bus = bus
        self.address = address
        self.full_scale = full_scale

    def setup(self) -> None:
        """Read the config register once: a chip that answers is enough (it has no id)."""
        self.bus.read_i2c_block_data(self.address, REG_CONFIG, 2)

    def read_channel(self, channel: int) -> float:
        """One single-shot conversion of AIN``channel``, in volts (blocks about 9 ms)."""
        word = config_word(channel, self.full_scale)
        self.bus.write_i2c_block_data(self.address, REG_CONFIG, [word >> 8, word & 0xFF])
        time.sleep(CONVERSION_MAX_S)
        for _ in range(10):
            status = self.bus.read_i2c_block_data(self.address, REG_CONFIG, 2)
            if status[0] & 0x80:  # OS reads 1 when no conversion is running
                break
            time.sleep(0.001)
        else:
            raise SensorDataInvalid("ads1115: the conversion did not finish within 20 ms")
        data = self.bus.read_i2c_block_data(self.address, REG_CONVERSION, 2)
        if len(data) != 2:
            raise SensorDataInvalid(f"ads1115: a conversion is 2 bytes, got {len(data)}")
        return counts_to_volts(data[0], data[1], self.full_scale)

    def read(self) -> dict[str, float]:
        """All four inputs in volts."""
        values = {f"ain{n}": self.read_channel(n) for n in range(4)}
        return check_values(self.driver_name, self.quantities, values)

"""Sensirion SHT3x (SHT30/31/35): temperature and humidity, single shot.

Written from the SHT3x-DIS datasheet: single-shot high repeatability without clock stretching
(command 0x2400, table 9), at most 15.5 ms per measurement (table 4), six bytes back
(temperature MSB, LSB, CRC, humidity MSB, LSB, CRC), CRC-8 with polynomial 0x31 and
initialisation 0xFF (section 4.12: the CRC of 0xBEEF is 0x92), and the conversions of section
4.13: T = -45 + 175 * S_T / 65535 degrees C, RH = 100 * S_RH / 65535 %RH.

Without clock stretching the sensor NACKs a read until the measurement is done; we wait the
datasheet's maximum first, so a NACK after that is a real fault (the bus retries it anyway).
"""

from __future__ import annotations

import time
from typing import ClassVar

from clawseed_edge.api import SensorDataInvalid

from ...sensor_driver import Quantity, Transport, check_values
from ..smbus import SMBusLike, bare_read

__all__ = ["SHT31", "convert", "crc8", "decode_frame"]

CMD_SINGLE_SHOT_HIGH = (0x24, 0x00)
CMD_SOFT_RESET = (0x30, 0xA2)
MEASURE_MAX_S = 0.0155


def crc8(data: bytes | list[int]) -> int:
    """Sensirion's CRC-8: polynomial 0x31 (x^8 + x^5 + x^4 + 1), init 0xFF, no final XOR."""
    crc = 0xFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = ((crc << 1) ^ 0x31) & 0xFF if crc & 0x80 else (crc << 1) & 0xFF
    return crc


def convert(raw_t: int, raw_rh: int) -> dict[str, float]:
    """Degrees C and %RH from the two 16-bit words (datasheet 4.13)."""
    return {
        "temperature": -45.0 + 175.0 * raw_t / 65535.0,
        "humidity": 100.0 * raw_rh / 65535.0,
    }


def decode_frame(frame: list[int]) -> dict[str, float]:
    """Check both CRCs of a 6-byte measurement frame and convert it.

    Raises:
        SensorDataInvalid: Short frame or a CRC mismatch (names which word failed).
    """
    if len(frame) != 6:
        raise SensorDataInvalid(f"sht31: a measurement is 6 bytes, got {len(frame)}")
    for word, offset in (("temperature", 0), ("humidity", 3)):
        data, crc = frame[offset : offset + 2], frame[offset + 2]
        if crc8(data) != crc:
            raise SensorDataInvalid(
                f"sht31: CRC check failed on the {word} word (got 0x{crc:02x}, computed "
                f"0x{crc8(data):02x}): noise on the bus; check the wiring and pull-ups, then "
                "read again"
            )
    return convert((frame[0] << 8) | frame[1], (frame[3] << 8) | frame[4])


class SHT31:
    """An SHT3x on an I2C bus, read with single-shot commands.

    Args:
        bus: An SMBus-like bus.
        address: 0x44 (ADDR to GND) or 0x45 (ADDR to VDD).

    Values: temperature in degrees C (-40..125), humidity in %RH (0..100).
    """

    driver_name: ClassVar[str] = "sht31"
    transport: ClassVar[Transport] = "i2c"
    addresses: ClassVar[tuple[int, ...]] = (0x44, 0x45)
    quantities: ClassVar[tuple[Quantity, ...]] = (
        Quantity("temperature", "°C", -40.0, 125.0, 1),
        Quantity("humidity", "%RH", 0.0, 100.0, 1),
    )
    min_interval_s: ClassVar[float] = 0.5
    summary: ClassVar[str] = "Sensirion SHT3x temperature, humidity (I2C 0x44/0x45)"

    def __init__(self, bus: SMBusLike, address: int = 0x44) -> None:
        self.bus = bus
        self.address = address

    def setup(self) -> None:
        """Soft-reset the sensor (datasheet 4.9: at most 1.5 ms until it listens again)."""
        cmd, arg = CMD_SOFT_RESET
        self.bus.write_byte_data(self.address, cmd, arg)
        time.sleep(0.0015)

    def read(self) -> dict[str, float]:
        """One single-shot measurement, CRC-checked (blocks about 16 ms)."""
        cmd, arg = CMD_SINGLE_SHOT_HIGH
        # A two-byte command is a "register" byte and a data byte on the wire.
        self.bus.write_byte_data(self.address, cmd, arg)
        time.sleep(MEASURE_MAX_S)
        # The result is fetched with a bare read: a register write first would be a command.
        values = decode_frame(bare_read(self.bus, self.address, 6))
        return check_values(self.driver_name, self.quantities, values)

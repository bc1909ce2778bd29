"""A simulated SHT3x: two-byte commands, a pending measurement, CRC-protected words.

Like the real chip without clock stretching, it NACKs a read when no measurement is pending,
and each word carries its own CRC-8 (computed here bit by bit, independently of the driver).
"""

from __future__ import annotations

from .bus import ChipModel, nack

__all__ = ["SHT31Model"]


def _crc(data: bytes) -> int:
    crc = 0xFF
    for byte in data:
        for bit in range(7, -1, -1):
            top = (crc >> 7) ^ ((byte >> bit) & 1)
            crc = ((crc << 1) & 0xFF) ^ (0x31 if top else 0)
    return crc


def _word(value: int) -> bytes:
    data = bytes([value >> 8, value & 0xFF])
    return data + bytes([_crc(data)])


class SHT31Model(ChipModel):
    """A simulated SHT31.

    Args:
        temperature: Degrees C (-45..130, what the 16-bit word can carry).
        humidity: %RH (0..100).

    Attributes:
        corrupt_crcs: How many of the next measurements are sent with a wrong CRC.
        measurements: How many single-shot measurements were started.
    """

    def __init__(self, *, temperature: float = 21.0, humidity: float = 45.0) -> None:
        self.temperature = temperature
        self.humidity = humidity
        self.corrupt_crcs = 0
        self.measurements = 0
        self._pending: bytes | None = None

    def set(self, **values: float) -> None:
        """Set ``temperature`` (degrees C) and/or ``humidity`` (%RH)."""
        for key, value in values.items():
            if key not in ("temperature", "humidity"):
                raise TypeError(
                    f"SHT31Model.set(): unknown {key!r}; it measures temperature, humidity"
                )
            setattr(self, key, float(value))

    def write(self, data: bytes) -> None:
        if len(data) < 2:
            return  # a quick write (scan) or half a command: the chip ignores it
        command = (data[0] << 8) | data[1]
        if command in (0x2400, 0x240B, 0x2416, 0x2C06, 0x2C0D, 0x2C10):  # single shot
            self.measurements += 1
            self._pending = self._frame()
        elif command == 0x30A2:  # soft reset
            self._pending = None
        elif command == 0xF32D:  # status register
            self._pending = _word(0x0000)

    def read(self, length: int) -> bytes:
        if self._pending is None:
            raise nack()  # no measurement pending: the real chip NACKs the read header
        frame, self._pending = self._pending, None
        return (frame + bytes(length))[:length]

    def _frame(self) -> bytes:
        raw_t = round((self.temperature + 45.0) * 65535.0 / 175.0)
        raw_rh = round(self.humidity * 65535.0 / 100.0)
        frame = bytearray(_word(min(max(raw_t, 0), 0xFFFF)) + _word(min(max(raw_rh, 0), 0xFFFF)))
        if self.corrupt_crcs > 0:
            self.corrupt_crcs -= 1
            frame[2] ^= 0x5A
        return bytes(frame)

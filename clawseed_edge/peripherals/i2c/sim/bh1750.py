"""A simulated BH1750: one-byte opcodes, MTreg, and a two-byte big-endian result.

It counts as the chip does (datasheet): count = lux * 1.2 * MTreg / 69, doubled in
H-resolution mode2, and in L-resolution mode only in 4 lx steps. A continuous mode measures all
the time; a one-time mode measures once when its opcode arrives and then powers down, so the
result stays what it was until the next one-time opcode.
"""

from __future__ import annotations

from .bus import ChipModel, nack

__all__ = ["BH1750Model"]

_CONTINUOUS = frozenset({0x10, 0x11, 0x13})
_ONE_TIME = frozenset({0x20, 0x21, 0x23})


class BH1750Model(ChipModel):
    """A simulated BH1750.

    Args:
        illuminance: Lux it measures.

    Attributes:
        mtreg: The measurement time register (69 after power-on).
        measurements: How many one-time measurements it made.

    It answers reads only after a measurement opcode (until then the chip has no result).
    """

    def __init__(self, *, illuminance: float = 320.0) -> None:
        self.illuminance = illuminance
        self.powered = False
        self.mode: int | None = None
        self.mtreg = 69
        self.measurements = 0
        self._held: int | None = None  # a one-time result

    def set(self, **values: float) -> None:
        """Set ``illuminance`` (lux)."""
        if set(values) - {"illuminance"}:
            raise TypeError("BH1750Model.set(): it measures illuminance only")
        self.illuminance = float(values["illuminance"])

    def write(self, data: bytes) -> None:
        if not data:
            return
        opcode = data[0]
        if opcode == 0x00:
            self.powered = False
        elif opcode == 0x01:
            self.powered = True
        elif opcode & 0xF8 == 0x40:  # 01000_hhh: MTreg bits 7-5
            self.mtreg = (self.mtreg & 0x1F) | (opcode & 0x07) << 5
        elif opcode & 0xE0 == 0x60:  # 011_lllll: MTreg bits 4-0
            self.mtreg = (self.mtreg & 0xE0) | (opcode & 0x1F)
        elif opcode in _CONTINUOUS and self.powered:
            self.mode, self._held = opcode, None
        elif opcode in _ONE_TIME:  # a one-time opcode wakes the chip by itself
            self.mode = opcode
            self._held = self._count()
            self.measurements += 1
            self.powered = False  # "automatically set to Power Down mode after measurement"

    def read(self, length: int) -> bytes:
        if self.mode is None:
            raise nack()
        counts = self._held if self._held is not None else self._count()
        return (bytes([counts >> 8, counts & 0xFF]) + bytes(length))[:length]

    def _count(self) -> int:
        assert self.mode is not None
        lux = self.illuminance
        if self.mode & 0x0F == 0x03:  # L-resolution: 4 lx steps
            lux = round(lux / 4) * 4
        counts = lux * 1.2 * self.mtreg / 69 * (2 if self.mode & 0x0F == 0x01 else 1)
        return min(max(round(counts), 0), 0xFFFF)

"""A simulated BH1750: one-byte opcodes, a two-byte big-endian result of lux * 1.2 counts."""

from __future__ import annotations

from .bus import ChipModel, nack

__all__ = ["BH1750Model"]

_MEASURE_OPCODES = frozenset({0x10, 0x11, 0x13, 0x20, 0x21, 0x23})


class BH1750Model(ChipModel):
    """A simulated BH1750.

    Args:
        illuminance: Lux it measures.

    It answers reads only after a measurement opcode (until then the chip has no result).
    """

    def __init__(self, *, illuminance: float = 320.0) -> None:
        self.illuminance = illuminance
        self.powered = False
        self.mode: int | None = None

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
            self.powered, self.mode = False, None
        elif opcode == 0x01:
            self.powered = True
        elif opcode in _MEASURE_OPCODES and self.powered:
            self.mode = opcode

    def read(self, length: int) -> bytes:
        if self.mode is None:
            raise nack()
        counts = min(max(round(self.illuminance * 1.2), 0), 0xFFFF)
        return (bytes([counts >> 8, counts & 0xFF]) + bytes(length))[:length]

"""A simulated ADS1115: 16-bit big-endian registers behind a pointer, single-shot conversions."""

from __future__ import annotations

from .bus import ChipModel

__all__ = ["ADS1115Model"]

_FSR = {0: 6.144, 1: 4.096, 2: 2.048, 3: 1.024, 4: 0.512, 5: 0.256, 6: 0.256, 7: 0.256}


class ADS1115Model(ChipModel):
    """A simulated ADS1115.

    Args:
        voltages: Volts on AIN0..AIN3 against GND.

    A config write with OS = 1 in single-shot mode converts the selected input at once (the
    chip takes 1/DR seconds; the driver waits for that anyway) and clips at the full scale as
    the chip does.
    """

    def __init__(self, *, voltages: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)):
        self.voltages = list(voltages)
        self.registers = {0: 0x0000, 1: 0x8583, 2: 0x8000, 3: 0x7FFF}
        self.pointer = 0
        self.conversions = 0

    def set(self, **values: float) -> None:
        """Set ``ain0``..``ain3`` in volts."""
        for key, value in values.items():
            if key not in ("ain0", "ain1", "ain2", "ain3"):
                raise TypeError(f"ADS1115Model.set(): unknown {key!r}; inputs are ain0..ain3")
            self.voltages[int(key[3])] = float(value)

    def write(self, data: bytes) -> None:
        if not data:
            return
        self.pointer = data[0] & 0x03
        if len(data) >= 3 and self.pointer != 0:  # the conversion register is read-only
            value = (data[1] << 8) | data[2]
            self.registers[self.pointer] = value & 0x7FFF  # OS reads back as "busy"
            if self.pointer == 1 and value & 0x8000 and value & 0x0100:
                self._convert(value)

    def read(self, length: int) -> bytes:
        value = self.registers[self.pointer]
        data = bytes([value >> 8, value & 0xFF])
        return (data * ((length + 1) // 2))[:length]

    def _convert(self, config: int) -> None:
        self.conversions += 1
        mux = (config >> 12) & 0x07
        fsr = _FSR[(config >> 9) & 0x07]
        volts = self.voltages[mux - 4] if mux >= 4 else 0.0  # differential pairs read 0 here
        counts = min(max(round(volts / fsr * 32768), -32768), 32767)
        self.registers[0] = counts & 0xFFFF
        self.registers[1] = config | 0x8000  # done: OS reads 1 again

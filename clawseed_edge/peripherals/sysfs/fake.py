"""``FakeSysfs``: the kernel's sensor files in a temporary directory, for simulation and tests.

It writes what the kernel's drivers write (``w1_therm``'s ``w1_slave`` with a real CRC, the
``dht11`` IIO attributes in thousandths), so the sysfs drivers read them with the same code
they run on a Pi; only the root differs (``/tmp/...`` instead of ``/sys``). Faults are
injected where the kernel reports them: a read of an attribute fails with an ``errno``
(:meth:`FakeSysfs.fail`), a CRC comes out wrong, a sensor reports its power-on value.
"""

from __future__ import annotations

import errno as errno_codes
import os
from dataclasses import dataclass
from pathlib import Path

from .files import FileReader, read_attribute
from .iio import IIO_DEVICES
from .w1 import W1_DEVICES

__all__ = ["FakeDHT", "FakeDS18B20", "FakeSysfs"]


def _crc_dallas(data: bytes) -> int:
    # Bit by bit, input bit against the CRC's low bit (the datasheet's shift-register drawing).
    crc = 0
    for byte in data:
        for bit in range(8):
            mix = (crc ^ (byte >> bit)) & 1
            crc >>= 1
            if mix:
                crc ^= 0x8C
    return crc


@dataclass(slots=True)
class _Fault:
    name: str
    code: int
    count: int


class FakeDS18B20:
    """A DS18B20's sysfs directory; :meth:`set` rewrites its ``w1_slave``."""

    def __init__(self, directory: Path, temperature: float) -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "name").write_text(directory.name + "\n")
        self.set(temperature=temperature)

    def set(self, *, temperature: float) -> None:
        """Degrees C, at the sensor's 1/16 degree resolution, as a finished conversion leaves
        the scratchpad (COUNT REMAIN = 0x10 - (LSB & 0x0F)), 85.000 degrees C included."""
        raw = round(temperature * 16)
        self._write(raw, 0x10 - (raw & 0x0F) if raw & 0x0F else 0x10)

    def power_on_value(self) -> None:
        """The power-on scratchpad (85 degrees C, COUNT REMAIN 0x0C), as a sensor whose
        conversion never ran."""
        self._write(0x0550, 0x0C)

    def power_on_text(self) -> str:
        """What ``w1_slave`` shows after a reset with no conversion since (the file is kept)."""
        return self._text(0x0550, 0x0C)

    def set_power(self, external: bool | None) -> None:
        """The kernel's ``ext_power``: True powered from VDD, False parasite, None: no such
        attribute (a kernel before 5.9)."""
        path = self.directory / "ext_power"
        if external is None:
            path.unlink(missing_ok=True)
        else:
            path.write_text("1\n" if external else "0\n")

    def corrupt_crc(self) -> None:
        """Make the stored scratchpad's CRC wrong (the kernel then says ``NO``)."""
        text = (self.directory / "w1_slave").read_text()
        (self.directory / "w1_slave").write_text(text.replace(" YES", " NO"))

    def _write(self, raw: int, count_remain: int) -> None:
        (self.directory / "w1_slave").write_text(self._text(raw, count_remain))
        millis = (raw - 0x10000 if raw & 0x8000 else raw) * 1000 // 16
        (self.directory / "temperature").write_text(f"{millis}\n")

    @staticmethod
    def _text(raw: int, count_remain: int) -> str:
        pad = bytearray((raw & 0xFFFF).to_bytes(2, "little") + bytes([0x4B, 0x46, 0x7F, 0xFF]))
        pad += bytes([count_remain, 0x10])
        pad.append(_crc_dallas(bytes(pad)))
        hexes = " ".join(f"{b:02x}" for b in pad)
        millis = (raw - 0x10000 if raw & 0x8000 else raw) * 1000 // 16
        return f"{hexes} : crc={pad[8]:02x} YES\n{hexes} t={millis}\n"


class FakeDHT:
    """A ``dht11`` IIO device directory; :meth:`set` rewrites its attributes."""

    def __init__(self, directory: Path, temperature: float, humidity: float) -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "name").write_text("dht11\n")
        self.set(temperature=temperature, humidity=humidity)

    def set(self, *, temperature: float | None = None, humidity: float | None = None) -> None:
        """Degrees C and %RH (the kernel writes thousandths)."""
        if temperature is not None:
            (self.directory / "in_temp_input").write_text(f"{round(temperature * 1000)}\n")
        if humidity is not None:
            (self.directory / "in_humidityrelative_input").write_text(f"{round(humidity * 1000)}\n")


class FakeSysfs:
    """A sysfs-like tree under ``root`` with 1-Wire and IIO sensors.

    Args:
        root: An empty (or not yet existing) directory; it stands for ``/sys``.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        (root / W1_DEVICES).mkdir(parents=True, exist_ok=True)
        (root / IIO_DEVICES).mkdir(parents=True, exist_ok=True)
        self._faults: list[_Fault] = []
        self._next: dict[str, list[str]] = {}  # file name -> what its next reads give
        self.reads = 0

    def add_ds18b20(self, serial: str = "0316a2791eff", temperature: float = 21.0) -> FakeDS18B20:
        """A DS18B20 at ``28-<serial>``."""
        return FakeDS18B20(self.root / W1_DEVICES / f"28-{serial}", temperature)

    def add_dht(self, index: int = 0, temperature: float = 21.0, humidity: float = 45.0) -> FakeDHT:
        """A DHT sensor at ``iio:device<index>``."""
        return FakeDHT(self.root / IIO_DEVICES / f"iio:device{index}", temperature, humidity)

    def fail(self, name: str, code: int = errno_codes.EIO, count: int = 1) -> None:
        """Make the next ``count`` reads of files called ``name`` fail with ``OSError(code)``."""
        self._faults.append(_Fault(name, code, count))

    def next_reads(self, name: str, texts: list[str]) -> None:
        """Make the next reads of files called ``name`` give ``texts``, one each, then the
        file again (a sensor whose answer changes between two reads)."""
        self._next.setdefault(name, []).extend(texts)

    def reader(self) -> FileReader:
        """The file reader the drivers get: injected faults first, then the real read."""

        def read(path: Path) -> str:
            self.reads += 1
            for fault in self._faults:
                if fault.name == path.name:
                    fault.count -= 1
                    if fault.count <= 0:
                        self._faults.remove(fault)
                    raise OSError(fault.code, os.strerror(fault.code), str(path))
            queued = self._next.get(path.name)
            if queued:
                return queued.pop(0)
            return read_attribute(path)

        return read

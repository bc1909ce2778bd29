"""DS18B20 temperature over 1-Wire, through the kernel's w1-gpio and w1_therm drivers.

With ``dtoverlay=w1-gpio`` (GPIO4 by default) each sensor appears as
``/sys/bus/w1/devices/28-<serial>/``. Its ``w1_slave`` file triggers a conversion (up to 750 ms
at 12 bits) and shows the scratchpad twice::

    72 01 4b 46 7f ff 0e 10 57 : crc=57 YES
    72 01 4b 46 7f ff 0e 10 57 t=23125

We check the kernel's verdict *and* the Dallas CRC-8 ourselves (DS18B20 datasheet: polynomial
x^8 + x^5 + x^4 + 1, LSB first) and decode the temperature from the scratchpad (bytes 0-1, 1/16
degree C per count). 85 degrees C (0x0550) is also the scratchpad's power-on value, which means
no conversion ran (parasite power without a strong pull-up, or a brown-out); a real 85.000
degrees C looks the same in bytes 0-1. Byte 6 (COUNT REMAIN, "reserved" in the DS18B20 sheet)
tells them apart: it is 0x0C at power-on (the datasheet's power-up scratchpad ``50 05 .. .. 7f ff
0c 10``), while a conversion leaves 0x10 - (LSB & 0x0F), i.e. 0x10 at exactly 85.000.

A power-on scratchpad is read again at once (a new conversion: a sensor that reset once, in a
brown-out, answers the second time). Twice in a row, the error says why from the kernel's
``ext_power`` attribute (w1_therm, Linux 5.9+): parasite power, or a sensor on VDD that resets
during the conversion (the supply, the ground, a long cable); both where the kernel cannot tell.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import ClassVar

from clawseed_edge.api import DeviceNotFound, SensorDataInvalid

from ..sensor_driver import Quantity, Transport, check_values
from .files import FileReader, read_attribute

__all__ = ["DS18B20", "W1_DEVICES", "PowerOnScratchpad", "dallas_crc8", "parse_w1_slave"]

W1_DEVICES = Path("bus/w1/devices")
"""Where 1-Wire devices appear, relative to the sysfs root (``/sys``)."""

FAMILY = "28"
POWER_ON_RAW = 0x0550  # 85.0 degrees C: the scratchpad's reset value
POWER_ON_COUNT_REMAIN = 0x0C  # scratchpad byte 6 at power-on; a conversion rewrites it
ENABLE_W1_ADVICE = (
    "enable 1-Wire with `sudo raspi-config nonint do_onewire 0` (or add `dtoverlay=w1-gpio` to "
    "/boot/firmware/config.txt; the data line is GPIO4 with a 4.7 kOhm pull-up to 3.3 V) and reboot"
)
_LINE = re.compile(r"^((?:[0-9a-f]{2} ){9}): crc=([0-9a-f]{2}) (YES|NO)$")
_TEMP = re.compile(r"^(?:[0-9a-f]{2} ){9}t=(-?\d+)$")


class PowerOnScratchpad(SensorDataInvalid):
    """The scratchpad still holds its power-on value: no conversion ran (read it again)."""


def dallas_crc8(data: bytes) -> int:
    """Maxim's 1-Wire CRC-8 (polynomial 0x31 reflected = 0x8C, init 0, LSB first)."""
    crc = 0
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x8C if crc & 1 else crc >> 1
    return crc


def parse_w1_slave(text: str, sensor: str = "ds18b20") -> float:
    """Degrees C from the text of a ``w1_slave`` file, every check applied.

    Raises:
        SensorDataInvalid: Unparseable text, the kernel's CRC verdict NO, our own CRC mismatch,
            an all-zero scratchpad (the data line held low), or the power-on scratchpad (85
            degrees C with COUNT REMAIN 0x0C; a converted 85.000 degrees C is accepted).
    """
    lines = text.strip().splitlines()
    first = _LINE.match(lines[0].strip()) if lines else None
    second = _TEMP.match(lines[1].strip()) if len(lines) > 1 else None
    if first is None or second is None:
        raise SensorDataInvalid(f"{sensor}: w1_slave is not what w1_therm writes: {text[:120]!r}")
    scratchpad = bytes.fromhex(first.group(1))
    if first.group(3) != "YES" or dallas_crc8(scratchpad[:8]) != scratchpad[8]:
        raise SensorDataInvalid(
            f"{sensor}: CRC check failed on the scratchpad ({first.group(1).strip()}): noise "
            "on the 1-Wire line; check the 4.7 kOhm pull-up and the cable length, then read again"
        )
    if not any(scratchpad):
        raise SensorDataInvalid(
            f"{sensor}: the scratchpad reads all zeros: the data line is "
            "held low (a short, or a sensor wired backwards)"
        )
    raw = int.from_bytes(scratchpad[0:2], "little", signed=True)
    if raw == POWER_ON_RAW and scratchpad[6] == POWER_ON_COUNT_REMAIN:
        raise PowerOnScratchpad(
            f"{sensor}: 85 °C is the DS18B20's power-on value: no conversion ran"
        )
    return raw / 16.0


class DS18B20:
    """One DS18B20 through ``/sys/bus/w1/devices/28-<serial>/w1_slave``.

    Args:
        device_dir: The sensor's directory (see :meth:`locate`).
        reader: How attribute files are read (the fake tree passes one that injects faults).

    Values: temperature in degrees C (-55..125, the datasheet's range).
    """

    driver_name: ClassVar[str] = "ds18b20"
    transport: ClassVar[Transport] = "w1"
    addresses: ClassVar[tuple[int, ...]] = ()
    quantities: ClassVar[tuple[Quantity, ...]] = (Quantity("temperature", "°C", -55.0, 125.0, 2),)
    min_interval_s: ClassVar[float] = 1.0
    summary: ClassVar[str] = "Maxim DS18B20 temperature over 1-Wire (kernel w1-gpio, w1_therm)"

    def __init__(self, device_dir: Path, *, reader: FileReader = read_attribute) -> None:
        self.device_dir = device_dir
        self._read = reader

    @staticmethod
    def locate(sysfs_root: Path, device: str | None) -> Path:
        """The directory of ``device`` (``28-0316a2791eff``), or of the only DS18B20 present.

        Raises:
            DeviceNotFound: No such sensor, none at all (with how to enable 1-Wire), or several
                and none named (lists them).
        """
        base = sysfs_root / W1_DEVICES
        present = sorted(p.name for p in base.glob(f"{FAMILY}-*")) if base.is_dir() else []
        if not base.is_dir():
            raise DeviceNotFound(f"no 1-Wire bus: {base} is missing; {ENABLE_W1_ADVICE}")
        if device is not None:
            if device in present:
                return base / device
            raise DeviceNotFound(
                f"no 1-Wire sensor {device!r} in {base}; present: {', '.join(present) or 'none'}"
            )
        if len(present) == 1:
            return base / present[0]
        if not present:
            raise DeviceNotFound(
                f"no DS18B20 found in {base}: check the wiring (data to GPIO4 with a 4.7 kOhm "
                "pull-up to 3.3 V)"
            )
        raise DeviceNotFound(
            f"several DS18B20 sensors are present ({', '.join(present)}); set device = "
            '"28-..." for each sensor in the config'
        )

    def setup(self) -> None:
        """Nothing to initialise: the kernel driver owns the sensor."""

    def read(self) -> dict[str, float]:
        """One conversion (blocks up to 750 ms on the kernel's side; a second one at once
        after a power-on scratchpad).

        Raises:
            SensorDataInvalid: As :func:`parse_w1_slave`; the power-on value twice in a row
                says what the kernel knows of the sensor's power.
        """
        name = f"ds18b20 {self.device_dir.name}"
        try:
            temperature = parse_w1_slave(self._read(self.device_dir / "w1_slave"), name)
        except PowerOnScratchpad:
            # Reset since the last conversion (a brown-out) or never converted: convert again.
            try:
                temperature = parse_w1_slave(self._read(self.device_dir / "w1_slave"), name)
            except PowerOnScratchpad as exc:
                raise PowerOnScratchpad(f"{exc}, twice in a row: {self._power_advice()}") from None
        return check_values(self.driver_name, self.quantities, {"temperature": temperature})

    def _power_advice(self) -> str:
        # w1_therm's ext_power: 1 powered from VDD, 0 parasite (absent before Linux 5.9).
        try:
            powered = self._read(self.device_dir / "ext_power").strip()
        except OSError:
            powered = ""
        if powered == "0":
            return (
                "it runs on parasite power (VDD not connected) and the conversion starves; "
                "wire VDD to 3.3 V (or fit a strong pull-up)"
            )
        if powered == "1":
            return (
                "it is powered from VDD, so it resets during the conversion: check the 3.3 V "
                "supply and the ground at the sensor, and shorten a long cable"
            )
        return (
            "either it runs on parasite power (wire VDD to 3.3 V) or it resets during the "
            "conversion (check the supply, the ground at the sensor, a long cable)"
        )

"""DHT11 / DHT22 (AM2302) through the kernel's ``dht11`` IIO driver, never bit-banged.

The DHT's single-wire protocol has 26/70 microsecond pulses that Python on Linux cannot time;
the kernel driver can. With ``dtoverlay=dht11,gpiopin=N`` the sensor appears as
``/sys/bus/iio/devices/iio:deviceK/`` with a ``name`` of ``dht11`` (for both DHT11 and DHT22)
and two attributes in thousandths: ``in_temp_input`` (milli degrees C) and
``in_humidityrelative_input`` (milli %RH).

A read fails with ``ETIMEDOUT`` when the driver saw too few edges (no answer: wiring, power,
the overlay's pin) and with ``EIO`` when every edge came but the data did not decode (a
checksum error, which noise makes routine; or, on every read, a DHT11 that sends decimal digits,
which the mainline driver refuses: "Don't know how to decode data" in ``dmesg``). We retry a
bounded number of times and say which it was. The driver caches a good reading for about
2 seconds, so the two attributes read back to back come from one measurement.
"""

from __future__ import annotations

import errno
import time
from pathlib import Path
from typing import ClassVar

from clawseed_edge.api import DeviceNoResponse, DeviceNotFound, SensorDataInvalid

from ..sensor_driver import Quantity, Transport, check_values
from .files import FileReader, describe_os_error, read_attribute

__all__ = ["DHT11", "DHT22", "IIO_DEVICES"]

IIO_DEVICES = Path("bus/iio/devices")
"""Where IIO devices appear, relative to the sysfs root (``/sys``)."""

RETRY_ERRNOS = frozenset({errno.EIO, errno.ETIMEDOUT, errno.EAGAIN})
ENABLE_DHT_ADVICE = (
    "add `dtoverlay=dht11,gpiopin=4` (your data pin) to /boot/firmware/config.txt and reboot"
)


class DHT22:
    """A DHT22/AM2302 through the ``dht11`` IIO driver.

    Args:
        device_dir: The IIO device's directory (see :meth:`locate`).
        reader: How attribute files are read (the fake tree injects faults through it).
        attempts: Reads tried before giving up (the driver's EIO is routine).
        retry_delay_s: Wait between tries, seconds: the sensor needs a moment after a failed
            start before it answers again.

    Values: temperature in degrees C, humidity in %RH.
    """

    driver_name: ClassVar[str] = "dht22"
    transport: ClassVar[Transport] = "iio"
    addresses: ClassVar[tuple[int, ...]] = ()
    quantities: ClassVar[tuple[Quantity, ...]] = (
        Quantity("temperature", "°C", -40.0, 80.0, 1),
        Quantity("humidity", "%RH", 0.0, 100.0, 1),
    )
    min_interval_s: ClassVar[float] = 2.0
    summary: ClassVar[str] = "DHT22/AM2302 temperature, humidity (kernel dht11 IIO driver)"

    def __init__(
        self,
        device_dir: Path,
        *,
        reader: FileReader = read_attribute,
        attempts: int = 4,
        retry_delay_s: float = 0.5,
    ) -> None:
        self.device_dir = device_dir
        self._read = reader
        self.attempts = max(1, attempts)
        self.retry_delay_s = retry_delay_s

    @staticmethod
    def locate(sysfs_root: Path, device: str | None) -> Path:
        """The directory of IIO ``device`` (``iio:device0``), or of the only ``dht11`` one.

        Raises:
            DeviceNotFound: No such device, none (with the overlay to add), or several unnamed.
        """
        base = sysfs_root / IIO_DEVICES
        found = []
        if base.is_dir():
            for entry in sorted(base.glob("iio:device*")):
                try:
                    name = read_attribute(entry / "name").strip()
                except OSError:
                    continue
                if name.startswith("dht11"):
                    found.append(entry.name)
        if device is not None:
            if device in found:
                return base / device
            raise DeviceNotFound(
                f"no DHT IIO device {device!r} in {base}; DHT devices present: "
                f"{', '.join(found) or 'none'}"
            )
        if len(found) == 1:
            return base / found[0]
        if not found:
            raise DeviceNotFound(f"no DHT sensor in {base}: {ENABLE_DHT_ADVICE}")
        raise DeviceNotFound(
            f"several DHT sensors are present ({', '.join(found)}); set device = "
            '"iio:deviceN" for each sensor in the config'
        )

    def setup(self) -> None:
        """Nothing to initialise: the kernel driver owns the pin."""

    def read(self) -> dict[str, float]:
        """Temperature and humidity, retrying the driver's routine EIO.

        Raises:
            DeviceNoResponse: Every try failed (the sensor is absent, unpowered or on another pin).
            SensorDataInvalid: The driver returned something that is not a number, or a value
                outside the sensor's range.
        """
        last: OSError | None = None
        codes: set[int | None] = set()
        for attempt in range(self.attempts):
            if attempt:
                time.sleep(self.retry_delay_s)
            try:
                temperature = self._milli("in_temp_input")
                humidity = self._milli("in_humidityrelative_input")
            except OSError as exc:
                if exc.errno not in RETRY_ERRNOS:
                    raise
                last = exc
                codes.add(exc.errno)
                continue
            values = {"temperature": temperature, "humidity": humidity}
            return check_values(self.driver_name, self.quantities, values)
        assert last is not None
        failed = f"{self.driver_name} at {self.device_dir.name}: {self.attempts} reads failed"
        if codes == {errno.EIO}:
            raise SensorDataInvalid(
                f"{failed} ({describe_os_error(last)}): {self._undecodable()}"
            ) from last
        raise DeviceNoResponse(
            f"{failed} ({describe_os_error(last)}): check the wiring (data pin, a 10 kOhm "
            "pull-up, 3.3 V) and the gpiopin of the dht11 overlay"
        ) from last

    def _undecodable(self) -> str:
        """What every read failing with EIO (the sensor answered, its data did not decode)
        means for this sensor."""
        return (
            "the sensor answers, but its data failed the checksum every time: noise on the "
            "line; shorten the cable and check the 10 kOhm pull-up"
        )

    def _milli(self, attribute: str) -> float:
        text = self._read(self.device_dir / attribute).strip()
        try:
            return int(text) / 1000.0
        except ValueError:
            raise SensorDataInvalid(
                f"{self.driver_name}: {attribute} is not a number: {text[:40]!r}"
            ) from None


class DHT11(DHT22):
    """A DHT11 through the same ``dht11`` IIO driver, 1 s apart.

    Its datasheet specifies 20..90 %RH and 0..50 degrees C (-20..60 on newer parts) for its
    accuracy, but the sensor reports beyond that (15 %RH in a heated room in winter is a real
    reading), so only the impossible is refused: humidity outside 0..100 %RH, temperature
    outside -20..60 degrees C.
    """

    driver_name: ClassVar[str] = "dht11"
    quantities: ClassVar[tuple[Quantity, ...]] = (
        Quantity("temperature", "°C", -20.0, 60.0, 0),
        Quantity("humidity", "%RH", 0.0, 100.0, 0),
    )
    min_interval_s: ClassVar[float] = 1.0
    summary: ClassVar[str] = "DHT11 temperature, humidity (kernel dht11 IIO driver)"

    def _undecodable(self) -> str:
        # The mainline driver decodes a DHT11 only with both decimal bytes 0; newer DHT11
        # parts send decimals and get EIO on every read, however good the wiring.
        return (
            "the sensor answers, but the kernel's dht11 driver refused its data every time. "
            'If `dmesg` shows "Don\'t know how to decode data", this DHT11 sends decimal '
            "digits (newer DHT11 parts do), which the mainline driver cannot decode: the wiring "
            "is fine, but this sensor cannot be read through that driver (a DHT22/AM2302 can); "
            "otherwise it is noise on the line (shorten the cable, check the 10 kOhm pull-up)"
        )

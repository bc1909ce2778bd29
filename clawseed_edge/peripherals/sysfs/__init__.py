"""Sensors the kernel already drives, read through sysfs: DS18B20 (1-Wire), DHT11/22 (IIO).

The drivers take the sysfs root as a path, so the fake tree (:class:`~.fake.FakeSysfs`) in a
temporary directory runs the same reading code as ``/sys`` on a Pi.
"""

from .fake import FakeDHT, FakeDS18B20, FakeSysfs
from .files import FileReader, read_attribute
from .iio import DHT11, DHT22
from .w1 import DS18B20, dallas_crc8, parse_w1_slave

__all__ = [
    "DHT11",
    "DHT22",
    "DS18B20",
    "FakeDHT",
    "FakeDS18B20",
    "FakeSysfs",
    "FileReader",
    "dallas_crc8",
    "parse_w1_slave",
    "read_attribute",
]

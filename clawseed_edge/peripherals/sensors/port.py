"""``SensorPort``: what the sensor tools need from a peripheral, and nothing more.

The tools depend on this protocol, not on :class:`~.bank.SensorBank`, so the tools module does
not import the peripheral that builds them (and another peripheral with sensors can offer the
same tools).
"""

from __future__ import annotations

from typing import Protocol

from ..sensor_driver import Reading
from .config import I2CSettings, ValidSensor

__all__ = ["SensorPort"]


class SensorPort(Protocol):
    """Named sensors and displays, and the I2C buses they sit on; coroutines raise api errors."""

    settings: I2CSettings

    def sensor_names(self) -> list[str]: ...

    def display_names(self) -> list[str]: ...

    def bus_numbers(self) -> list[int]: ...

    def sensor(self, name: str) -> ValidSensor: ...

    async def read(self, name: str) -> Reading: ...

    async def show(self, name: str, text: str) -> list[str]: ...

    async def scan(self, bus: int) -> list[int]: ...

    async def read_register(
        self, bus: int, address: int, register: int, length: int
    ) -> list[int]: ...

    async def write_register(
        self, bus: int, address: int, register: int, data: list[int]
    ) -> None: ...

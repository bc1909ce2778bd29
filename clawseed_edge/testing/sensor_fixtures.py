"""pytest fixture ``sim_i2c``: connected simulated sensor banks from TOML snippets.

::

    async def test_greenhouse(sim_i2c):
        bank = await sim_i2c('''
            [[sensors]]
            name = "greenhouse"
            driver = "bme280"
        ''')
        bank.sim.sensor("greenhouse").set(temperature=21.5, humidity=40)
        reading = await bank.read("greenhouse")
        assert reading.values["temperature"] == 21.5

The bank runs the real drivers against register-level chip models on a simulated bus (and a
fake sysfs tree for DS18B20/DHT); ``bank.sim.bus(1).inject(...)`` injects bus faults. Every bank
is disconnected after the test. Loaded by the ``clawseed_edge`` pytest plugin.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from clawseed_edge.peripherals.sensors.bank import SensorBank

try:  # async fixtures work in pytest-asyncio's strict mode too
    import pytest_asyncio

    _async_fixture: Any = pytest_asyncio.fixture
except ImportError:  # pragma: no cover - without pytest-asyncio there are no async tests
    _async_fixture = pytest.fixture

__all__ = ["sim_i2c"]


@_async_fixture  # type: ignore[untyped-decorator]
async def sim_i2c() -> AsyncIterator[Callable[..., Awaitable[SensorBank]]]:
    """Make connected simulated sensor banks; they are disconnected after the test."""
    from clawseed_edge.testing.sensors import sim_sensor_bank

    banks: list[SensorBank] = []

    async def make(sensors_toml: str, **options: Any) -> SensorBank:
        bank = sim_sensor_bank(sensors_toml, **options)
        banks.append(bank)
        await bank.connect()
        return bank

    yield make
    for bank in banks:
        await bank.disconnect()

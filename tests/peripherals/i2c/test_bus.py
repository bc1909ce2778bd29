"""I2CBus over the simulated bus: the worker, retries, and what each failure tells the user."""

from __future__ import annotations

import errno

import pytest

from clawseed_edge.api import (
    BusAccessDenied,
    BusLost,
    BusNotFound,
    DeviceNoResponse,
    HardwareError,
    ResourceClosed,
)
from clawseed_edge.peripherals.i2c.bus import I2CBus
from clawseed_edge.peripherals.i2c.drivers.bme280 import BME280
from clawseed_edge.peripherals.i2c.sim import BME280Model, SHT31Model, SimI2CBus


def make(sim: SimI2CBus, attempts: int = 3) -> I2CBus:
    return I2CBus(sim.number, opener=sim.opener(), attempts=attempts, retry_delay_s=0)


async def test_scan_finds_the_attached_chips() -> None:
    sim = SimI2CBus(1)
    sim.attach(0x76, BME280Model())
    sim.attach(0x44, SHT31Model())  # NACKs reads: found by a quick write, as i2cdetect does
    async with make(sim) as bus:
        assert await bus.scan() == [0x44, 0x76]


async def test_missing_bus_says_how_to_enable_i2c() -> None:
    sim = SimI2CBus(3)
    sim.present = False
    bus = make(sim)
    with pytest.raises(BusNotFound, match=r"/dev/i2c-3 is missing.*raspi-config nonint do_i2c 0"):
        await bus.open()
    assert bus.state == "closed"


async def test_permission_denied_names_the_i2c_group() -> None:
    sim = SimI2CBus(1)
    sim.denied = True
    with pytest.raises(BusAccessDenied, match="i2c group"):
        await make(sim).open()


async def test_nack_is_retried_then_succeeds() -> None:
    sim = SimI2CBus(1)
    sim.attach(0x76, BME280Model())
    sim.inject(errno.EREMOTEIO, address=0x76, count=2)
    async with make(sim, attempts=3) as bus:
        chip = await bus.call(lambda b: b.read_byte_data(0x76, 0xD0), what="id", address=0x76)
    assert chip == 0x60


async def test_absent_device_names_the_address_and_what_a_scan_finds() -> None:
    sim = SimI2CBus(1)
    sim.attach(0x77, BME280Model())
    async with make(sim) as bus:
        with pytest.raises(DeviceNoResponse) as info:
            await bus.call(lambda b: BME280(b, 0x76).read(), what="reading air", address=0x76)
    message = str(info.value)
    assert "no device answered at 0x76 on I2C bus 1 (NACK)" in message
    assert "i2c_scan finds 0x77 on bus 1" in message


async def test_bus_lost_mid_read_is_an_error_and_the_next_call_reopens() -> None:
    sim = SimI2CBus(1)
    sim.attach(0x76, BME280Model(temperature=19.0))
    async with make(sim) as bus:
        driver = BME280(sim, 0x76)
        await bus.call(lambda b: driver.setup(), what="setup", address=0x76)
        sim.inject(errno.ENODEV, after=1)  # the write of ctrl_hum passes, then the bus is gone
        with pytest.raises(BusLost, match="went away during the transfer"):
            await bus.call(lambda b: driver.read(), what="reading", address=0x76)
        opens = sim.opens
        values = await bus.call(lambda b: driver.read(), what="reading", address=0x76)
    assert sim.opens == opens + 1
    assert values["temperature"] == pytest.approx(19.0, abs=0.01)


async def test_other_errors_pass_through_untranslated() -> None:
    sim = SimI2CBus(1)

    def buggy(_: object) -> None:
        raise KeyError("a driver bug stays a bug")

    async with make(sim) as bus:
        with pytest.raises(KeyError):
            await bus.call(buggy, what="x", address=None)


async def test_transient_errors_exhaust_the_retries() -> None:
    sim = SimI2CBus(1)
    sim.attach(0x76, BME280Model())
    sim.inject(errno.ETIMEDOUT, count=2)
    async with make(sim, attempts=2) as bus:
        with pytest.raises(HardwareError, match="timed out"):
            await bus.call(lambda b: b.read_byte_data(0x76, 0xD0), what="id", address=0x76)
        assert await bus.call(lambda b: b.read_byte_data(0x76, 0xD0), what="id", address=0x76)


async def test_a_closed_bus_refuses_calls() -> None:
    sim = SimI2CBus(1)
    bus = make(sim)
    await bus.open()
    await bus.aclose()
    await bus.aclose()
    with pytest.raises(ResourceClosed, match="make a new I2CBus"):
        await bus.scan()

"""DS18B20 and DHT sensors in a SensorBank on the fake sysfs tree, through the sensor_read tool."""

from __future__ import annotations

import errno
from collections.abc import Awaitable, Callable
from pathlib import Path

from clawseed_edge.api import ToolContext, ToolResult
from clawseed_edge.peripherals.sensors.bank import SensorBank

SimI2C = Callable[..., Awaitable[SensorBank]]

WIRING = """
[[sensors]]
name = "soil"
driver = "ds18b20"

[[sensors]]
name = "shed"
driver = "dht22"
options = { retry_delay_s = 0 }
"""


async def read(bank: SensorBank, sensor: str) -> ToolResult:
    tool = next(t for t in bank.tools() if t.name == "sensor_read")
    return await tool.execute({"sensor": sensor}, ToolContext())


async def test_sysfs_sensors_read_through_the_tool(sim_i2c: SimI2C) -> None:
    bank = await sim_i2c(WIRING)
    bank.sim.sensor("soil").set(temperature=14.5)
    bank.sim.sensor("shed").set(temperature=8.3, humidity=71.2)
    assert "soil: temperature 14.50 °C" in (await read(bank, "soil")).output
    assert "shed: temperature 8.3 °C, humidity 71.2 %RH" in (await read(bank, "shed")).output
    assert [t.name for t in bank.tools()] == ["sensor_read"]  # no I2C bus, no scan


async def test_ds18b20_power_on_value_is_a_tool_error_and_the_next_read_works(
    sim_i2c: SimI2C,
) -> None:
    bank = await sim_i2c(WIRING)
    fake = bank.sim.sensor("soil")
    fake.power_on_value()
    result = await read(bank, "soil")
    assert not result.success
    assert "85 °C is the DS18B20's power-on value" in (result.error or "")
    fake.set(temperature=15.0)
    assert "15.00 °C" in (await read(bank, "soil")).output


async def test_dht_read_that_fails_twice_then_works(sim_i2c: SimI2C) -> None:
    bank = await sim_i2c(WIRING)
    bank.sim.sysfs.fail("in_temp_input", errno.EIO, count=2)
    result = await read(bank, "shed")
    assert result.success, result.error
    assert "temperature 21.0 °C, humidity 45.0 %RH" in result.output


async def test_dht_that_keeps_failing_is_a_clear_error_then_recovers(sim_i2c: SimI2C) -> None:
    bank = await sim_i2c(WIRING)
    bank.sim.sysfs.fail("in_temp_input", errno.EIO, count=4)
    result = await read(bank, "shed")
    assert "4 reads failed (Input/output error (EIO))" in (result.error or "")
    assert (await read(bank, "shed")).success


async def test_a_probe_missing_at_start_is_found_at_a_later_read(tmp_path: Path) -> None:
    # The non-simulated path, pointed at a fake tree instead of /sys.
    from clawseed_edge.peripherals.sensors.config import parse_sensor_tables, validate_sensors
    from clawseed_edge.peripherals.sensors.registry import default_driver_registry
    from clawseed_edge.peripherals.sysfs import FakeSysfs

    sysfs = FakeSysfs(tmp_path / "sys")
    registry = default_driver_registry()
    sensors, displays, settings = parse_sensor_tables(
        {"sensors": [{"name": "pond", "driver": "ds18b20"}]}
    )
    valid = validate_sensors(sensors, displays, registry)
    async with SensorBank(valid, settings=settings, sysfs_root=sysfs.root) as bank:
        health = await bank.health_check()
        assert not health.healthy and "pond" in health.detail
        result = await read(bank, "pond")
        assert "no DS18B20 found" in (result.error or "")
        sysfs.add_ds18b20(temperature=11.5)
        assert "temperature 11.50 °C" in (await read(bank, "pond")).output
        assert (await bank.health_check()).healthy


async def test_a_greenhouse_at_85_degrees_and_a_dry_room_are_readings(sim_i2c: SimI2C) -> None:
    # A converted 85.000 °C (COUNT REMAIN 0x10) is real, unlike the power-on scratchpad; a
    # DHT11's 15 %RH is outside its accuracy range, not impossible (issue 21 item 8).
    bank = await sim_i2c(
        WIRING + '[[sensors]]\nname = "room"\ndriver = "dht11"\ndevice = "iio:device1"\n'
    )
    bank.sim.sensor("soil").set(temperature=85.0)
    assert "soil: temperature 85.00 °C" in (await read(bank, "soil")).output
    bank.sim.sensor("room").set(temperature=23.0, humidity=15.0)
    result = await read(bank, "room")
    assert result.success, result.error
    assert "humidity 15 %RH" in result.output

"""SensorBank and its tools on the simulated bus: readings, the cache, faults, displays."""

from __future__ import annotations

import errno
from collections.abc import Awaitable, Callable

import pytest

from clawseed_edge.api import DeviceNotFound, RiskClass, Tool, ToolContext, ToolResult
from clawseed_edge.peripherals.sensors.bank import SensorBank

SimI2C = Callable[..., Awaitable[SensorBank]]

WIRING = """
[[sensors]]
name = "greenhouse"
driver = "bme280"
address = 0x76

[[sensors]]
name = "porch"
driver = "sht31"

[[sensors]]
name = "light"
driver = "bh1750"

[[sensors]]
name = "adc"
driver = "ads1115"
options = { full_scale = 4.096 }

[[displays]]
name = "lcd"
driver = "hd44780"
"""


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def tool(bank: SensorBank, name: str) -> Tool:
    return next(t for t in bank.tools() if t.name == name)


async def call(bank: SensorBank, name: str, **arguments: object) -> ToolResult:
    return await tool(bank, name).execute(arguments, ToolContext())


async def test_reads_every_driver_with_units(sim_i2c: SimI2C) -> None:
    bank = await sim_i2c(WIRING)
    bank.sim.sensor("greenhouse").set(temperature=21.5, humidity=40, pressure=1002.5)
    bank.sim.sensor("porch").set(temperature=12.0, humidity=80)
    bank.sim.sensor("light").set(illuminance=350)
    bank.sim.sensor("adc").set(ain0=1.25)
    assert (
        (await bank.read("greenhouse"))
        .text()
        .startswith(
            "greenhouse: temperature 21.5 °C, humidity 40.0 %RH, pressure 1002.5 hPa (read at "
        )
    )
    assert (await bank.read("porch")).format_value("humidity") == "80.0 %RH"
    assert (await bank.read("light")).format_value("illuminance") == "350 lx"
    assert (await bank.read("adc")).format_value("ain0") == "1.2500 V"


async def test_a_reading_within_the_minimum_interval_is_cached() -> None:
    from clawseed_edge.testing.sensors import sim_sensor_bank

    clock = Clock()
    bank = sim_sensor_bank('[[sensors]]\nname = "air"\ndriver = "bme280"\nmin_interval_s = 5')
    bank._clock = clock  # the cache's clock; the drivers' own waits are real
    async with bank:
        model = bank.sim.sensor("air")
        first = await bank.read("air")
        model.set(temperature=30.0)
        # Served from the cache for the minimum interval less a tolerance (here 0.5 s), so a
        # reader on a 5 s grid whose pass comes a little early still gets its new reading.
        clock.now += 4.4
        again = await bank.read("air")
        clock.now += 0.2
        fresh = await bank.read("air")
    assert (again.cached, again.values) == (True, first.values)
    assert "cached" in again.text()
    assert (fresh.cached, fresh.values["temperature"]) == (False, 30.0)
    assert model.measurements == 2


async def test_sensor_read_tool_schema_enumerates_the_sensors(sim_i2c: SimI2C) -> None:
    bank = await sim_i2c(WIRING)
    names = [t.name for t in bank.tools()]
    assert names == ["sensor_read", "i2c_scan", "display_show"]  # no raw access by default
    schema = tool(bank, "sensor_read").parameters
    assert schema["properties"]["sensor"]["enum"] == ["greenhouse", "porch", "light", "adc"]


async def test_raw_register_tools_only_when_enabled(sim_i2c: SimI2C) -> None:
    bank = await sim_i2c(WIRING + "\n[i2c]\nraw_access = true\n")
    read = tool(bank, "i2c_read_register")
    write = tool(bank, "i2c_write_register")
    assert read.risk is RiskClass.READ
    assert write.risk is RiskClass.DANGEROUS
    result = await call(bank, "i2c_read_register", address="0x76", register=0xD0)
    assert result.output == "0x76 register 0xd0: 60"
    action = write.describe_action({"address": 0x76, "register": 0xE0, "data": [0xB6]})
    assert (action.operation, action.allowed) == ("write", True)
    assert "write b6 to register 0xe0 of 0x76" in action.summary


async def test_scan_names_configured_chips_and_missing_ones(sim_i2c: SimI2C) -> None:
    bank = await sim_i2c(WIRING)
    bank.sim.bus(1).detach(0x23)
    result = await call(bank, "i2c_scan")
    assert result.output == (
        "I2C bus 1: 0x27 (lcd), 0x44 (porch), 0x48 (adc), 0x76 (greenhouse). "
        "Configured but not answering: light (0x23)"
    )


async def test_absent_device_is_a_tool_error_then_works_once_plugged_in(sim_i2c: SimI2C) -> None:
    bank = await sim_i2c(WIRING)
    model = bank.sim.bus(1).devices[0x44]
    bank.sim.bus(1).detach(0x44)
    result = await call(bank, "sensor_read", sensor="porch")
    assert not result.success
    assert "no device answered at 0x44 on I2C bus 1 (NACK)" in result.error
    assert "i2c_scan finds 0x23, 0x27, 0x48, 0x76" in result.error
    bank.sim.bus(1).attach(0x44, model)
    assert (await call(bank, "sensor_read", sensor="porch")).success


async def test_bus_gone_mid_read_is_a_tool_error_and_the_next_read_works(sim_i2c: SimI2C) -> None:
    bank = await sim_i2c(WIRING)
    bank.sim.bus(1).inject(errno.ENODEV, after=2)
    result = await call(bank, "sensor_read", sensor="greenhouse")
    assert "I2C bus 1 went away during the transfer" in result.error
    result = await call(bank, "sensor_read", sensor="greenhouse")
    assert result.success, result.error


async def test_crc_failure_is_a_tool_error_and_is_not_cached(sim_i2c: SimI2C) -> None:
    bank = await sim_i2c(WIRING)
    bank.sim.sensor("porch").corrupt_crcs = 1
    result = await call(bank, "sensor_read", sensor="porch")
    assert "CRC check failed" in result.error
    result = await call(bank, "sensor_read", sensor="porch")
    assert result.success and "temperature 21.0 °C" in result.output


async def test_display_show_writes_the_lcd(sim_i2c: SimI2C) -> None:
    bank = await sim_i2c(WIRING)
    result = await call(bank, "display_show", text="greenhouse 21.5°C")
    assert result.output == "lcd shows: greenhouse | 21.5°C"
    assert bank.sim.sensor("lcd").lines == ["greenhouse      ", "21.5°C          "]
    too_long = await call(bank, "display_show", text="x " * 30)
    assert "shows 2 lines of 16 characters" in too_long.error


async def test_unknown_sensor_lists_the_configured_ones(sim_i2c: SimI2C) -> None:
    bank = await sim_i2c(WIRING)
    result = await call(bank, "sensor_read", sensor="attic")
    assert result.error == "no sensor named 'attic'; sensors: greenhouse, porch, light, adc"
    with pytest.raises(DeviceNotFound, match="configured: greenhouse"):
        await bank.read("attic")


async def test_status_shows_the_last_readings(sim_i2c: SimI2C) -> None:
    bank = await sim_i2c(WIRING)
    await bank.read("greenhouse")
    status = {s["device"]: s for s in await bank.status()}
    assert status["greenhouse"]["where"] == "on I2C bus 1 at 0x76"
    assert "temperature 21.0 °C" in status["greenhouse"]["reading"]
    assert "reading" not in status["porch"]


async def test_status_can_read_every_sensor_and_reports_failures(sim_i2c: SimI2C) -> None:
    bank = await sim_i2c(WIRING)
    bank.sim.bus(1).detach(0x23)
    status = {s["device"]: s for s in await bank.status(read=True)}
    assert status["porch"]["values"] == {"temperature": 21.0, "humidity": 45.0}
    assert "no device answered at 0x23" in status["light"]["error"]
    assert status["lcd"]["lines"] == ["", ""]


async def test_a_16x4_lcd_shows_four_lines_where_the_module_shows_them(sim_i2c: SimI2C) -> None:
    bank = await sim_i2c(
        '[[displays]]\nname = "lcd"\ndriver = "hd44780"\noptions = { columns = 16, rows = 4 }'
    )
    result = await call(bank, "display_show", text="one\ntwo\nthree\nfour")
    assert result.output == "lcd shows: one | two | three | four"
    assert bank.sim.sensor("lcd").text == "one\ntwo\nthree\nfour"


async def test_bh1750_options_mode_and_mtreg_from_the_config(sim_i2c: SimI2C) -> None:
    bank = await sim_i2c(
        '[[sensors]]\nname = "light"\ndriver = "bh1750"\n'
        'options = { mode = "one_time_high2", mtreg = 138 }'
    )
    bank.sim.sensor("light").set(illuminance=20.0)
    result = await call(bank, "sensor_read", sensor="light")
    assert "illuminance 20 lx" in result.output, result.output
    assert bank.sim.sensor("light").mtreg == 138


@pytest.mark.parametrize(("height", "rows"), [(64, 8), (32, 4)])
async def test_display_show_on_an_ssd1306_oled(sim_i2c: SimI2C, height: int, rows: int) -> None:
    bank = await sim_i2c(
        f'[[displays]]\nname = "oled"\ndriver = "ssd1306"\noptions = {{ height = {height} }}'
    )
    result = await call(bank, "display_show", text="greenhouse 21.5°C\nall windows shut")
    assert result.output == "oled shows: greenhouse 21.5°C | all windows shut"
    oled = bank.sim.sensor("oled")
    assert oled.text == "greenhouse 21.5°C\nall windows shut"
    too_long = await call(bank, "display_show", text="word " * 40)
    assert too_long.error is not None and f"{rows} lines of 21" in too_long.error
    status = {s["device"]: s for s in await bank.status()}
    assert status["oled"]["lines"][:2] == ["greenhouse 21.5°C", "all windows shut"]


async def test_a_display_option_its_model_lacks_is_left_to_the_driver() -> None:
    # The simulated panel takes only its own geometry; the driver judges the option, as on a Pi.
    from clawseed_edge.api import ConfigInvalid
    from clawseed_edge.testing.sensors import sim_sensor_bank

    bank = sim_sensor_bank(
        '[[displays]]\nname = "lcd"\ndriver = "hd44780"\noptions = { height = 32 }'
    )
    with pytest.raises(ConfigInvalid, match="driver hd44780 does not take these options"):
        await bank.connect()


async def _waiting(bank: SensorBank, name: str) -> None:
    """Until the worker's reading of ``name`` waits to be taken (bounded attempts)."""
    import asyncio

    rep = bank._channel(name).ahead
    assert rep is not None
    for _ in range(1000):
        if rep._outcome is not None:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the worker read nothing within 10 s")


async def test_a_reading_taken_ahead_by_the_worker_is_new_and_costs_no_bus_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from clawseed_edge.peripherals.i2c.bus import I2CBus
    from clawseed_edge.testing.sensors import sim_sensor_bank

    asked: list[str] = []
    call = I2CBus.call

    async def counted(self: I2CBus, fn: Callable[..., object], **kw: object) -> object:
        asked.append(str(kw.get("what")))
        return await call(self, fn, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(I2CBus, "call", counted)
    bank = sim_sensor_bank('[[sensors]]\nname = "air"\ndriver = "bme280"\n')
    async with bank:
        model = bank.sim.sensor("air")
        model.set(temperature=30.0)
        seen: list[object] = []
        bank.states.subscribe(seen.append)
        asked.clear()  # what connecting asked of the bus
        assert bank.read_ahead("air", ready_in_s=0.0, every_s=5.0)
        await _waiting(bank, "air")
        reading = await bank.read("air")
        assert (reading.cached, reading.values["temperature"]) == (False, 30.0)
        assert asked == [] and model.measurements == 1  # read by the worker alone
        assert len(seen) == 1  # published when taken, like any new reading
        again = await bank.read("air")  # nothing waiting: within the minimum interval, cached
        assert again.cached and model.measurements == 1
        assert not bank.read_ahead("air", 0.0, 0.0)  # stopped
    assert not bank.read_ahead("air", 0.0, 1.0)  # not connected: read when asked


async def test_a_failed_read_ahead_is_the_next_reads_error() -> None:
    from clawseed_edge.api import HardwareError
    from clawseed_edge.testing.sensors import sim_sensor_bank

    bank = sim_sensor_bank('[[sensors]]\nname = "air"\ndriver = "bme280"\n')
    async with bank:
        bank.sim.bus(1).present = False  # the adapter was unplugged
        assert bank.read_ahead("air", ready_in_s=0.0, every_s=5.0)
        await _waiting(bank, "air")
        with pytest.raises(HardwareError):
            await bank.read("air")
        bank.read_ahead("air", 0.0, 0.0)

"""[[sensors]] / [[displays]] / [i2c] validation: each mistake names the file, the key, the fix."""

from __future__ import annotations

import pytest

from clawseed_edge.api import ConfigInvalid
from clawseed_edge.peripherals.sensors.config import parse_sensor_tables, validate_sensors
from clawseed_edge.peripherals.sensors.registry import default_driver_registry
from clawseed_edge.testing.sensors import sim_sensor_bank


def check(toml: str, **kw: object) -> None:
    sim_sensor_bank(toml, source="cfg.toml", **kw)  # type: ignore[arg-type]


def test_unknown_driver_lists_the_drivers() -> None:
    with pytest.raises(ConfigInvalid) as info:
        check('[[sensors]]\nname = "x"\ndriver = "bme281"')
    message = str(info.value)
    assert message.startswith("cfg.toml: sensors[0].driver: unknown sensor driver 'bme281'")
    assert "ads1115, am2302, bh1750, bme280, dht11, dht22, ds18b20, hd44780" in message


@pytest.mark.parametrize("address", ["0x02", "0x78", "0x80"])
def test_address_outside_the_7_bit_range(address: str) -> None:
    with pytest.raises(
        ConfigInvalid, match=r"sensors\[0\]\.address: 'x': address 0x.. is outside 0x03-0x77"
    ):
        check(f'[[sensors]]\nname = "x"\ndriver = "bme280"\naddress = {address}')


def test_two_sensors_on_one_address() -> None:
    toml = (
        '[[sensors]]\nname = "a"\ndriver = "bme280"\n'
        '[[sensors]]\nname = "b"\ndriver = "bme280"\naddress = 0x76\n'
    )
    with pytest.raises(
        ConfigInvalid,
        match=r"sensors\[1\]\.address: 'b': address 0x76 on bus 1 is already used by 'a'",
    ):
        check(toml)


def test_same_address_on_another_bus_is_fine() -> None:
    check(
        '[[sensors]]\nname = "a"\ndriver = "bme280"\n[[sensors]]\nname = "b"\ndriver = "bme280"\nbus = 3\n'
    )


def test_i2c_pins_used_as_gpio_devices() -> None:
    registry = default_driver_registry()
    sensors, displays, _ = parse_sensor_tables(
        {"sensors": [{"name": "air", "driver": "bme280"}]}, "cfg.toml"
    )
    with pytest.raises(ConfigInvalid, match=r"GPIO devices are wired to them: GPIO2 \(red_led\)"):
        validate_sensors(sensors, displays, registry, i2c_pins_in_use={"GPIO2": "red_led"})


def test_display_in_the_sensors_table() -> None:
    with pytest.raises(ConfigInvalid, match=r"hd44780 is a display: put it under \[\[displays\]\]"):
        check('[[sensors]]\nname = "lcd"\ndriver = "hd44780"')


def test_unknown_key_and_duplicate_name() -> None:
    with pytest.raises(
        ConfigInvalid, match=r"cfg.toml: sensors\[0\]\.adress: unknown key 'adress'"
    ):
        check('[[sensors]]\nname = "x"\ndriver = "bme280"\nadress = 0x76')
    with pytest.raises(ConfigInvalid, match="already used by a GPIO device"):
        check('[[sensors]]\nname = "fan"\ndriver = "bme280"', taken_names=["fan"])


def test_sysfs_sensor_takes_no_address() -> None:
    with pytest.raises(ConfigInvalid, match="ds18b20 is not an I2C chip"):
        check('[[sensors]]\nname = "soil"\ndriver = "ds18b20"\naddress = 0x28')


async def test_bad_driver_option_names_the_key() -> None:
    bank = sim_sensor_bank('[[sensors]]\nname = "adc"\ndriver = "ads1115"\noptions = { gain = 2 }')
    with pytest.raises(
        ConfigInvalid, match=r"sensors\[0\]\.options: 'adc': driver ads1115 does not take"
    ):
        await bank.connect()
    assert bank.state == "closed"


def test_a_gpio_device_on_sda_of_the_board_is_refused_with_sensors_on_bus_1() -> None:
    from clawseed_edge.peripherals import default_registry, loads_hardware_toml
    from clawseed_edge.peripherals.sensors.config import I2CSettings, SensorConfig
    from clawseed_edge.peripherals.sensors.factory import sensor_bank_from_config

    board = default_registry().get("rpi4b")
    hardware = loads_hardware_toml('[[devices]]\nname = "led"\npin = "BOARD3"\nkind = "led"\n')
    air = SensorConfig(name="air", driver="bme280")
    with pytest.raises(ConfigInvalid, match=r"cfg.toml: sensors\[0\]\.bus: .*GPIO2 \(led\)"):
        sensor_bank_from_config(
            [air], [], I2CSettings(), sim=True, board=board,
            gpio_devices=hardware.devices, source="cfg.toml",
        )  # fmt: skip
    on_bus_3 = SensorConfig(name="air", driver="bme280", bus=3)
    bank = sensor_bank_from_config(
        [on_bus_3], [], I2CSettings(), sim=True, board=board, gpio_devices=hardware.devices
    )
    assert bank is not None and bank.board_type == "rpi4b"
    assert sensor_bank_from_config([], [], I2CSettings(), sim=True) is None

"""DS18B20 and DHT readers against the kernel's file formats, in a fake sysfs tree."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from clawseed_edge.api import DeviceNoResponse, DeviceNotFound, SensorDataInvalid
from clawseed_edge.peripherals.sysfs import (
    DHT11,
    DHT22,
    DS18B20,
    FakeSysfs,
    dallas_crc8,
    parse_w1_slave,
)

KERNEL_EXAMPLE = "72 01 4b 46 7f ff 0e 10 57 : crc=57 YES\n72 01 4b 46 7f ff 0e 10 57 t=23125\n"


@pytest.fixture
def sysfs(tmp_path: Path) -> FakeSysfs:
    return FakeSysfs(tmp_path / "sys")


def test_dallas_crc_of_the_w1_therm_example() -> None:
    assert dallas_crc8(bytes.fromhex("72014b467fff0e10")) == 0x57


def test_parse_w1_slave_decodes_the_scratchpad() -> None:
    assert parse_w1_slave(KERNEL_EXAMPLE) == 23.125


def test_parse_w1_slave_refuses_a_crc_the_kernel_accepted_but_that_is_wrong() -> None:
    bad = KERNEL_EXAMPLE.replace("10 57 :", "10 58 :").replace("crc=57", "crc=58")
    with pytest.raises(SensorDataInvalid, match="CRC check failed"):
        parse_w1_slave(bad)


def test_parse_w1_slave_refuses_garbage() -> None:
    with pytest.raises(SensorDataInvalid, match="not what w1_therm writes"):
        parse_w1_slave("hello\n")


def test_ds18b20_reads_the_fake_tree(sysfs: FakeSysfs) -> None:
    fake = sysfs.add_ds18b20(temperature=-10.125)
    sensor = DS18B20(DS18B20.locate(sysfs.root, None), reader=sysfs.reader())
    assert sensor.read() == {"temperature": -10.125}
    fake.set(temperature=24.5)
    assert sensor.read() == {"temperature": 24.5}


def test_ds18b20_power_on_value_is_an_error_then_the_next_read_works(sysfs: FakeSysfs) -> None:
    fake = sysfs.add_ds18b20()
    sensor = DS18B20(DS18B20.locate(sysfs.root, None), reader=sysfs.reader())
    fake.power_on_value()
    with pytest.raises(SensorDataInvalid, match="85 °C is the DS18B20's power-on value"):
        sensor.read()
    fake.set(temperature=20.0)
    assert sensor.read() == {"temperature": 20.0}


# The DS18B20 datasheet's power-up scratchpad: 85 degrees C (50 05), TH/TL from EEPROM, config
# 7F, then FF, 0C (COUNT REMAIN), 10; its CRC is 0x1C.
POWER_ON = "50 05 4b 46 7f ff 0c 10 1c : crc=1c YES\n50 05 4b 46 7f ff 0c 10 1c t=85000\n"
# A finished conversion of exactly 85.000 degrees C: COUNT REMAIN = 0x10 - (0x50 & 0x0F) = 0x10.
REAL_85 = "50 05 4b 46 7f ff 10 10 bd : crc=bd YES\n50 05 4b 46 7f ff 10 10 bd t=85000\n"


def test_ds18b20_datasheet_power_on_scratchpad_is_refused() -> None:
    assert dallas_crc8(bytes.fromhex("50054b467fff0c10")) == 0x1C
    with pytest.raises(SensorDataInvalid, match="power-on value"):
        parse_w1_slave(POWER_ON)


def test_ds18b20_a_real_85_000_degrees_is_accepted() -> None:
    assert parse_w1_slave(REAL_85) == 85.0


def test_ds18b20_real_85_through_the_fake_tree(sysfs: FakeSysfs) -> None:
    fake = sysfs.add_ds18b20()
    sensor = DS18B20(DS18B20.locate(sysfs.root, None), reader=sysfs.reader())
    fake.set(temperature=85.0)
    assert sensor.read() == {"temperature": 85.0}
    fake.power_on_value()
    with pytest.raises(SensorDataInvalid, match="power-on value"):
        sensor.read()


def test_ds18b20_crc_no_is_an_error(sysfs: FakeSysfs) -> None:
    fake = sysfs.add_ds18b20()
    fake.corrupt_crc()
    with pytest.raises(SensorDataInvalid, match="pull-up"):
        DS18B20(fake.directory).read()


def test_ds18b20_locate_explains_what_is_missing(tmp_path: Path, sysfs: FakeSysfs) -> None:
    with pytest.raises(DeviceNotFound, match="do_onewire 0"):
        DS18B20.locate(tmp_path / "nothing", None)
    with pytest.raises(DeviceNotFound, match="no DS18B20 found"):
        DS18B20.locate(sysfs.root, None)
    sysfs.add_ds18b20("aaaa")
    sysfs.add_ds18b20("bbbb")
    with pytest.raises(DeviceNotFound, match="28-aaaa, 28-bbbb"):
        DS18B20.locate(sysfs.root, None)
    assert DS18B20.locate(sysfs.root, "28-bbbb").name == "28-bbbb"


def test_dht22_reads_thousandths(sysfs: FakeSysfs) -> None:
    sysfs.add_dht(temperature=23.4, humidity=55.1)
    sensor = DHT22(DHT22.locate(sysfs.root, None), reader=sysfs.reader(), retry_delay_s=0)
    assert sensor.read() == {"temperature": 23.4, "humidity": 55.1}


def test_dht_read_that_fails_twice_then_works(sysfs: FakeSysfs) -> None:
    sysfs.add_dht(temperature=19.0, humidity=60.0)
    sensor = DHT22(DHT22.locate(sysfs.root, None), reader=sysfs.reader(), retry_delay_s=0)
    sysfs.fail("in_temp_input", errno.EIO, count=2)
    assert sensor.read() == {"temperature": 19.0, "humidity": 60.0}
    assert sysfs.reads == 4  # two failed reads, then both attributes


def test_dht_that_never_answers_is_a_clear_error_and_the_next_read_works(
    sysfs: FakeSysfs,
) -> None:
    sysfs.add_dht()
    sensor = DHT22(
        DHT22.locate(sysfs.root, None), reader=sysfs.reader(), attempts=3, retry_delay_s=0
    )
    sysfs.fail("in_humidityrelative_input", errno.ETIMEDOUT, count=3)
    with pytest.raises(DeviceNoResponse, match=r"3 reads failed \(.*ETIMEDOUT\).*pull-up"):
        sensor.read()
    assert sensor.read()["humidity"] == 45.0


def test_dht11_refuses_only_the_impossible(sysfs: FakeSysfs) -> None:
    fake = sysfs.add_dht(temperature=20.0, humidity=101.0)
    sensor = DHT11(fake.directory, retry_delay_s=0)
    with pytest.raises(SensorDataInvalid, match="outside what the sensor can measure"):
        sensor.read()
    fake.set(humidity=50.0, temperature=70.0)
    with pytest.raises(SensorDataInvalid, match="outside what the sensor can measure"):
        sensor.read()


@pytest.mark.parametrize("humidity", [15.0, 95.0, 0.0, 100.0])
def test_dht11_readings_outside_its_accuracy_range_are_real(
    sysfs: FakeSysfs, humidity: float
) -> None:
    # The DHT11 sheet's 20..90 %RH is where its accuracy is specified, not what it can report:
    # 15 %RH in a heated room in winter is a real reading (issue 21 item 8).
    fake = sysfs.add_dht(temperature=22.0, humidity=humidity)
    assert DHT11(fake.directory, retry_delay_s=0).read() == {
        "temperature": 22.0,
        "humidity": humidity,
    }


def test_dht_locate_names_the_overlay(sysfs: FakeSysfs) -> None:
    with pytest.raises(DeviceNotFound, match="dtoverlay=dht11,gpiopin="):
        DHT22.locate(sysfs.root, None)


# --- issue 36, item 14 ------------------------------------------------------------------------


def test_ds18b20_power_on_value_once_is_read_again_at_once(sysfs: FakeSysfs) -> None:
    fake = sysfs.add_ds18b20(temperature=21.5)
    sensor = DS18B20(DS18B20.locate(sysfs.root, None), reader=sysfs.reader())
    sysfs.next_reads("w1_slave", [fake.power_on_text()])  # a brown-out reset the sensor once
    assert sensor.read() == {"temperature": 21.5}
    assert sysfs.reads == 2  # the second conversion came at once, in the same read


@pytest.mark.parametrize(
    ("external", "says", "not_says"),
    [
        (False, "parasite power (VDD not connected)", "resets during"),
        (True, "powered from VDD, so it resets during the conversion", "parasite"),
        (None, "either it runs on parasite power", None),
    ],
)
def test_ds18b20_power_on_twice_says_what_the_kernel_knows_of_its_power(
    sysfs: FakeSysfs, external: bool | None, says: str, not_says: str | None
) -> None:
    fake = sysfs.add_ds18b20()
    fake.set_power(external)
    fake.power_on_value()
    sensor = DS18B20(DS18B20.locate(sysfs.root, None), reader=sysfs.reader())
    with pytest.raises(SensorDataInvalid, match="twice in a row") as err:
        sensor.read()
    assert says in str(err.value)
    if not_says:
        assert not_says not in str(err.value)


def test_a_dht11_sending_decimals_is_named_not_called_a_wiring_fault(sysfs: FakeSysfs) -> None:
    # The mainline dht11 driver answers EIO on every read of such a part: the edges came, the
    # data did not decode.
    fake = sysfs.add_dht()
    sensor = DHT11(fake.directory, reader=sysfs.reader(), attempts=3, retry_delay_s=0)
    sysfs.fail("in_temp_input", errno.EIO, count=3)
    with pytest.raises(SensorDataInvalid) as err:
        sensor.read()
    message = str(err.value)
    assert "decimal digits" in message and "Don't know how to decode data" in message
    assert "gpiopin" not in message  # not the wiring advice of a sensor that never answers
    # A DHT22 failing the same way is a checksum problem, said as such.
    dht22 = DHT22(fake.directory, reader=sysfs.reader(), attempts=2, retry_delay_s=0)
    sysfs.fail("in_temp_input", errno.EIO, count=2)
    with pytest.raises(SensorDataInvalid, match="checksum every time"):
        dht22.read()

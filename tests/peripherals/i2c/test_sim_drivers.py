"""Each driver against its register-level model on the simulated bus (the same driver code a
Pi runs on /dev/i2c-N)."""

from __future__ import annotations

import pytest

from clawseed_edge.api import SensorDataInvalid
from clawseed_edge.peripherals.i2c.drivers.ads1115 import ADS1115
from clawseed_edge.peripherals.i2c.drivers.bh1750 import BH1750
from clawseed_edge.peripherals.i2c.drivers.bme280 import BME280
from clawseed_edge.peripherals.i2c.drivers.hd44780 import HD44780
from clawseed_edge.peripherals.i2c.drivers.sht31 import SHT31
from clawseed_edge.peripherals.i2c.sim import (
    ADS1115Model,
    BH1750Model,
    BME280Model,
    HD44780Model,
    SHT31Model,
    SimI2CBus,
)


@pytest.fixture
def bus() -> SimI2CBus:
    return SimI2CBus(1)


@pytest.mark.parametrize(
    ("t", "h", "p"), [(21.5, 40.0, 1013.2), (-20.0, 95.0, 880.0), (60.0, 3.0, 1090.0)]
)
def test_bme280_reads_what_the_model_measures(bus: SimI2CBus, t: float, h: float, p: float) -> None:
    bus.attach(0x77, BME280Model(temperature=t, humidity=h, pressure=p))
    values = BME280(bus, 0x77).read()
    assert values["temperature"] == pytest.approx(t, abs=0.01)
    assert values["humidity"] == pytest.approx(h, abs=0.05)
    assert values["pressure"] == pytest.approx(p, abs=0.01)


def test_bme280_humidity_needs_ctrl_hum_before_ctrl_meas(bus: SimI2CBus) -> None:
    # The model latches ctrl_hum only on a ctrl_meas write, as the chip does; a forced
    # measurement without it leaves humidity "skipped", which the driver refuses.
    model = bus.attach(0x76, BME280Model())
    driver = BME280(bus, 0x76)
    driver.setup()
    bus.write_byte_data(0x76, 0xF4, 0x25)  # forced, without ctrl_hum
    assert model.registers[0xFD:0xFF] == b"\x80\x00"


def test_bme280_refuses_another_chip(bus: SimI2CBus) -> None:
    bus.attach(0x76, BME280Model(chip_id=0x58))
    with pytest.raises(SensorDataInvalid, match="BMP280"):
        BME280(bus, 0x76).setup()


def test_bme280_impossible_temperature_is_an_error_not_a_number(bus: SimI2CBus) -> None:
    model = bus.attach(0x76, BME280Model())
    driver = BME280(bus, 0x76)
    model.set_raw(adc_t=1)  # compensates to about -141 C
    with pytest.raises(SensorDataInvalid, match=r"temperature -14\d\.\d °C is outside"):
        driver.read()
    model.set(temperature=20.0)
    assert driver.read()["temperature"] == pytest.approx(20.0, abs=0.01)


def test_sht31_reads_and_checks_crcs(bus: SimI2CBus) -> None:
    model = bus.attach(0x44, SHT31Model(temperature=18.25, humidity=61.0))
    driver = SHT31(bus, 0x44)
    driver.setup()
    assert driver.read() == pytest.approx({"temperature": 18.25, "humidity": 61.0}, abs=0.01)
    model.corrupt_crcs = 1
    with pytest.raises(SensorDataInvalid, match="CRC"):
        driver.read()
    assert driver.read()["temperature"] == pytest.approx(18.25, abs=0.01)


def test_sht31_model_nacks_a_read_without_a_measurement(bus: SimI2CBus) -> None:
    bus.attach(0x44, SHT31Model())
    with pytest.raises(OSError):
        bus.read_byte(0x44)


def test_bh1750_reads_lux(bus: SimI2CBus) -> None:
    bus.attach(0x23, BH1750Model(illuminance=28067))
    assert BH1750(bus).read()["illuminance"] == pytest.approx(28067, abs=1)


def test_ads1115_reads_four_inputs_in_volts(bus: SimI2CBus) -> None:
    model = bus.attach(0x48, ADS1115Model(voltages=(0.5, 1.65, 3.3, 0.0)))
    values = ADS1115(bus, full_scale=4.096).read()
    assert values == pytest.approx({"ain0": 0.5, "ain1": 1.65, "ain2": 3.3, "ain3": 0.0}, abs=2e-4)
    assert model.conversions == 4


def test_ads1115_clips_at_its_full_scale(bus: SimI2CBus) -> None:
    bus.attach(0x48, ADS1115Model(voltages=(3.0, 0, 0, 0)))
    value = ADS1115(bus, full_scale=2.048).read_channel(0)
    assert value == pytest.approx(2.048 - 62.5e-6)


def test_ads1115_refuses_an_unknown_gain(bus: SimI2CBus) -> None:
    with pytest.raises(ValueError, match=r"4\.096"):
        ADS1115(bus, full_scale=3.3)


def test_hd44780_shows_text_after_the_datasheet_init(bus: SimI2CBus) -> None:
    lcd = bus.attach(0x27, HD44780Model())
    driver = HD44780(bus, 0x27)
    driver.setup()
    driver.show(["greenhouse", "21.5°C 40%RH"])
    assert lcd.lines == ["greenhouse      ", "21.5°C 40%RH    "]
    assert lcd.backlight
    driver.show(["hi"])
    assert lcd.text == "hi"


def test_hd44780_without_init_shows_nothing(bus: SimI2CBus) -> None:
    # The controller powers up in 8-bit mode with the display off: text sent as 4-bit
    # nibbles without the init sequence does not appear.
    lcd = bus.attach(0x27, HD44780Model())
    HD44780(bus, 0x27).show(["hello"])
    assert lcd.text == ""


@pytest.mark.parametrize("columns", [16, 20])
def test_hd44780_four_rows_land_where_the_module_shows_them(bus: SimI2CBus, columns: int) -> None:
    lcd = bus.attach(0x27, HD44780Model(columns=columns, rows=4))
    driver = HD44780(bus, 0x27, columns=columns, rows=4)
    driver.setup()
    driver.show(["one", "two", "three", "four"])
    assert lcd.text == "one\ntwo\nthree\nfour"
    # Where the datasheet's 4-line modules show rows 3-4: 0x10/0x50 (16x4), 0x14/0x54 (20x4).
    assert lcd.ddram[columns : columns + 5] == b"three"
    assert lcd.ddram[0x40 + columns : 0x40 + columns + 4] == b"four"


def test_hd44780_refuses_a_geometry_one_controller_cannot_drive(bus: SimI2CBus) -> None:
    with pytest.raises(ValueError, match="40x4"):
        HD44780(bus, 0x27, columns=40, rows=4)


@pytest.mark.parametrize(
    ("mode", "mtreg", "lux", "tolerance"),
    [
        ("continuous_high2", 69, 123.5, 0.5),
        ("continuous_low", 69, 400.0, 4.0),
        ("continuous_high", 254, 10.0, 0.3),
        ("one_time_high", 31, 100000.0, 2.0),
        ("one_time_low", 100, 52.0, 4.0),
    ],
)
def test_bh1750_modes_and_measurement_time(
    bus: SimI2CBus, mode: str, mtreg: int, lux: float, tolerance: float
) -> None:
    model = bus.attach(0x23, BH1750Model(illuminance=lux))
    driver = BH1750(bus, mode=mode, mtreg=mtreg)  # type: ignore[arg-type]
    assert driver.read()["illuminance"] == pytest.approx(lux, abs=tolerance)
    assert model.mtreg == mtreg


def test_bh1750_one_time_mode_measures_again_on_every_read(bus: SimI2CBus) -> None:
    # The chip powers down after a one-time measurement and holds that result: a driver that
    # does not send the opcode again would report the old light level for ever.
    model = bus.attach(0x23, BH1750Model(illuminance=50.0))
    driver = BH1750(bus, mode="one_time_high")
    assert driver.read()["illuminance"] == pytest.approx(50.0, abs=1)
    model.set(illuminance=800.0)
    assert driver.read()["illuminance"] == pytest.approx(800.0, abs=1)
    assert model.measurements == 2 and not model.powered


def test_bh1750_refuses_an_unknown_mode_and_mtreg(bus: SimI2CBus) -> None:
    with pytest.raises(ValueError, match="one_time_high"):
        BH1750(bus, mode="fast")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"31\.\.254"):
        BH1750(bus, mtreg=300)


@pytest.mark.parametrize(("height", "rows"), [(64, 8), (32, 4)])
def test_ssd1306_text_reads_back_from_the_pixels(bus: SimI2CBus, height: int, rows: int) -> None:
    from clawseed_edge.peripherals.i2c.drivers.ssd1306 import SSD1306
    from clawseed_edge.peripherals.i2c.sim import SSD1306Model

    oled = bus.attach(0x3C, SSD1306Model(height=height))
    driver = SSD1306(bus, 0x3C, height=height)
    assert (driver.columns, driver.rows) == (21, rows)
    driver.setup()
    text = ["greenhouse 21.5°C", "humidity 40%RH", "x" * 21, "last line"][:rows]
    driver.show(text)
    assert oled.lines[: len(text)] == [line.ljust(21) for line in text]
    # The top row of 'g' (row 2 of its cell is 0x0f: pixels 1-4) and the blank spacing column.
    assert [oled.pixel(x, 2) for x in range(6)] == [False, True, True, True, True, False]
    assert not any(oled.pixel(x, 0) for x in range(5))  # row 0 of 'g' is empty
    driver.show(["hi"])
    assert oled.text == "hi"


def test_ssd1306_without_setup_stays_dark(bus: SimI2CBus) -> None:
    from clawseed_edge.peripherals.i2c.drivers.ssd1306 import SSD1306
    from clawseed_edge.peripherals.i2c.sim import SSD1306Model

    oled = bus.attach(0x3C, SSD1306Model())
    SSD1306(bus, 0x3C).show(["hello"])
    assert oled.text == "" and "charge pump off (8Dh 14h): the panel stays dark" in oled.problems()


def test_ssd1306_refuses_sizes_and_overlong_lines(bus: SimI2CBus) -> None:
    from clawseed_edge.api import ToolArgumentsInvalid
    from clawseed_edge.peripherals.i2c.drivers.ssd1306 import SSD1306

    with pytest.raises(ValueError, match="height = 64 or 32"):
        SSD1306(bus, 0x3C, height=48)
    with pytest.raises(ToolArgumentsInvalid, match="4 lines of 21"):
        SSD1306(bus, 0x3C, height=32).show(["x" * 22])

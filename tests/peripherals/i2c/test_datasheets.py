"""Driver math against the datasheets' worked examples and tables."""

from __future__ import annotations

import pytest

from clawseed_edge.api import SensorDataInvalid, ToolArgumentsInvalid
from clawseed_edge.peripherals.i2c.drivers import ads1115, bh1750, bme280, hd44780, sht31
from clawseed_edge.peripherals.i2c.sim import EXAMPLE_TRIMMING, BME280Model

CAL = bme280.BME280Calibration(**EXAMPLE_TRIMMING)


def test_bme280_temperature_matches_the_datasheet_example() -> None:
    # BMP280 datasheet 3.12 (same formula in the BME280's 8.1): adc_T = 519888 with the
    # example trimming gives t_fine = 128422 and 25.08 degrees C.
    temperature, t_fine = bme280.compensate_temperature(CAL, 519888)
    assert int(t_fine) == 128422
    assert temperature == pytest.approx(25.08, abs=0.005)


def test_bme280_pressure_matches_the_datasheet_example() -> None:
    # Same example: adc_P = 415148 gives 100653.27 Pa in double precision.
    _, t_fine = bme280.compensate_temperature(CAL, 519888)
    assert bme280.compensate_pressure(CAL, 415148, t_fine) == pytest.approx(100653.27, abs=0.01)


def test_bme280_integer_formulas_of_the_model_agree_with_the_example() -> None:
    # The model uses the datasheet's fixed-point formulas: 2508 (0.01 C) and 100653 Pa.
    model = BME280Model()
    assert model.temperature_int(519888) == (2508, 128422)
    assert model.pressure_int(415148, 128422) // 256 == 100653


@pytest.mark.parametrize("adc_h", [22000, 27000, 31000, 37000])
def test_bme280_humidity_double_and_integer_formulas_agree(adc_h: int) -> None:
    model = BME280Model()
    _, t_fine = bme280.compensate_temperature(CAL, 519888)
    double = bme280.compensate_humidity(CAL, adc_h, t_fine)
    fixed = model.humidity_int(adc_h, 128422) / 1024
    assert 0 < double < 100
    assert double == pytest.approx(fixed, abs=0.01)


def test_bme280_trimming_is_decoded_from_its_registers() -> None:
    registers = BME280Model().registers
    block1 = list(registers[0x88:0xA2])
    block2 = list(registers[0xE1:0xE8])
    assert bme280.BME280Calibration.from_registers(block1, block2) == CAL


def test_bme280_trimming_with_negative_h4_h5_is_sign_extended() -> None:
    trimming = {**EXAMPLE_TRIMMING, "H4": -5, "H5": -300}
    registers = BME280Model(trimming=trimming).registers
    cal = bme280.BME280Calibration.from_registers(
        list(registers[0x88:0xA2]), list(registers[0xE1:0xE8])
    )
    assert (cal.H4, cal.H5) == (-5, -300)


def test_bme280_erased_trimming_is_an_error() -> None:
    cal = bme280.BME280Calibration(**{**EXAMPLE_TRIMMING, "P1": 0})
    with pytest.raises(SensorDataInvalid, match="erased"):
        cal.check()


def test_sht31_crc_of_beef_is_0x92() -> None:
    # SHT3x datasheet 4.12.
    assert sht31.crc8([0xBE, 0xEF]) == 0x92


def test_sht31_conversion_formulas() -> None:
    # Datasheet 4.13: the ends of the 16-bit range are -45/130 C and 0/100 %RH.
    assert sht31.convert(0, 0) == {"temperature": -45.0, "humidity": 0.0}
    assert sht31.convert(0xFFFF, 0xFFFF) == {"temperature": 130.0, "humidity": 100.0}
    assert sht31.convert(0x6666, 0x8000)["temperature"] == pytest.approx(25.0, abs=0.01)


def test_sht31_frame_with_a_bad_crc_is_an_error() -> None:
    frame = [0x66, 0x66, sht31.crc8([0x66, 0x66]), 0x80, 0x00, 0x00]
    with pytest.raises(SensorDataInvalid, match="CRC check failed on the humidity word"):
        sht31.decode_frame(frame)


def test_bh1750_datasheet_example_is_28067_lux() -> None:
    # BH1750FVI datasheet: 1000_0011 1001_0000 -> 28067 lx.
    assert round(bh1750.counts_to_lux(0b1000_0011, 0b1001_0000)) == 28067


@pytest.mark.parametrize(
    ("full_scale", "pga", "lsb_uv"),
    [(6.144, 0, 187.5), (4.096, 1, 125.0), (2.048, 2, 62.5), (1.024, 3, 31.25),
     (0.512, 4, 15.625), (0.256, 5, 7.8125)],
)  # fmt: skip
def test_ads1115_gain_table(full_scale: float, pga: int, lsb_uv: float) -> None:
    # ADS111x datasheet table 3: full-scale range and LSB size per PGA setting.
    assert ads1115.FULL_SCALE[full_scale] == pga
    assert ads1115.counts_to_volts(0x00, 0x01, full_scale) * 1e6 == pytest.approx(lsb_uv)
    assert ads1115.counts_to_volts(0x7F, 0xFF, full_scale) == pytest.approx(
        full_scale - lsb_uv / 1e6
    )
    assert ads1115.counts_to_volts(0x80, 0x00, full_scale) == -full_scale


def test_ads1115_config_word_for_ain0_at_2048() -> None:
    # OS=1, MUX=100 (AIN0/GND), PGA=010, MODE=1, DR=100, COMP_QUE=11 -> 0xC583.
    assert ads1115.config_word(0, 2.048) == 0xC583
    assert ads1115.config_word(3, 4.096) == 0xF383


def test_hd44780_text_uses_rom_a00_codes() -> None:
    assert hd44780.encode_text("21.5°C") == b"21.5\xdfC"
    assert hd44780.encode_text("a\\b€") == b"a/b?"


def test_hd44780_layout_wraps_and_refuses_what_does_not_fit() -> None:
    assert hd44780.layout("greenhouse 21.5°C 40%RH", 16, 2) == ["greenhouse", "21.5°C 40%RH"]
    assert hd44780.layout("a\nb", 16, 2) == ["a", "b"]
    with pytest.raises(ToolArgumentsInvalid, match="2 lines of 16"):
        hd44780.layout("x" * 40, 16, 2)


def test_hd44780_16x4_rows_3_and_4_are_at_0x10_and_0x50() -> None:
    # A 4-line module splits the controller's two 40-character lines: rows 3-4 start right
    # after the visible width (16x4: 0x10/0x50; 20x4: 0x14/0x54).
    assert hd44780.row_offsets(16) == (0x00, 0x40, 0x10, 0x50)
    assert hd44780.row_offsets(20) == (0x00, 0x40, 0x14, 0x54)


def test_bh1750_mtreg_opcodes_and_mode2_formula() -> None:
    # MTreg is written as 01000_hhh then 011_lllll: 69 = 010_00101 -> 0x42, 0x65; 254 -> 0x47, 0x7E.
    assert bh1750.mtreg_opcodes(69) == (0x42, 0x65)
    assert bh1750.mtreg_opcodes(254) == (0x47, 0x7E)
    assert bh1750.mtreg_opcodes(31) == (0x40, 0x7F)
    # lux = count / 1.2 * (69 / MTreg), halved in H-resolution mode2.
    assert bh1750.counts_to_lux(0x83, 0x90, mtreg=138) == pytest.approx(28067 / 2, abs=0.5)
    assert bh1750.counts_to_lux(0x83, 0x90, mode2=True) == pytest.approx(28067 / 2, abs=0.5)
    assert bh1750.measurement_time_s("one_time_low") == pytest.approx(0.024)
    assert bh1750.measurement_time_s("continuous_high", 138) == pytest.approx(0.36)


# The SSD1306 application note's software initialisation flow (datasheet, "Software
# Initialization Flow Chart"), each step with the value our modules need, in its order.
SSD1306_FLOW = [
    ("Set MUX Ratio", (0xA8, None)),
    ("Set Display Offset", (0xD3, 0x00)),
    ("Set Display Start Line", (0x40,)),
    ("Set Segment re-map", (0xA1,)),
    ("Set COM Output Scan Direction", (0xC8,)),
    ("Set COM Pins hardware configuration", (0xDA, None)),
    ("Set Contrast Control", (0x81, 0x7F)),
    ("Disable Entire Display On", (0xA4,)),
    ("Set Normal Display", (0xA6,)),
    ("Set Osc Frequency", (0xD5, 0x80)),
    ("Enable charge pump regulator", (0x8D, 0x14)),
    ("Display On", (0xAF,)),
]


@pytest.mark.parametrize(("height", "mux", "com_pins"), [(64, 0x3F, 0x12), (32, 0x1F, 0x02)])
def test_ssd1306_init_follows_the_application_note(height: int, mux: int, com_pins: int) -> None:
    from clawseed_edge.peripherals.i2c.drivers.ssd1306 import SSD1306
    from clawseed_edge.peripherals.i2c.sim import SimI2CBus, SSD1306Model

    bus = SimI2CBus(1)
    model = bus.attach(0x3C, SSD1306Model(height=height))
    SSD1306(bus, 0x3C, height=height).setup()
    sent = model.commands  # decoded from the I2C stream, parameters included
    expected = [
        tuple({0xA8: mux, 0xDA: com_pins}.get(step[0], v) if v is None else v for v in step)
        for _, step in SSD1306_FLOW
    ]
    positions = [sent.index(step) for step in expected]  # each step is sent ...
    assert positions == sorted(positions), "... in the flow chart's order"
    assert sent[-1] == (0xAF,), "display on comes last, after the charge pump"
    assert model.problems() == []
    # RAM is cleared before the display goes on (it holds noise at power-on).
    assert not any(model.ram[: 128 * (height // 8)])

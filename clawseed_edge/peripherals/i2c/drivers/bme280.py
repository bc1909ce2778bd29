"""Bosch BME280: temperature, humidity and pressure, in forced or normal mode.

Written from the BME280 datasheet (BST-BME280-DS002): the register map (section 5.3), the
trimming parameter readout (section 4.2.2, table 16) and the compensation formulas in double
precision (section 8.1). Temperature and pressure use the same formulas as the BMP280, whose
datasheet works one example through (section 3.12); our tests check against it.

Two of the datasheet's modes (section 3.3), both at 1x oversampling of every channel:

* Forced mode (section 3.5.1, "weather monitoring"): each read starts one measurement, waits
  for it (about 10 ms) and the chip sleeps again afterwards. For sensors read when asked and
  sensors sampled less often than every :data:`NORMAL_MODE_MAX_INTERVAL_S`.
* Normal mode (section 3.3.4): the chip measures on its own, one measurement then a standby
  time t_sb, and a read is one burst of the latest result with no wait. For a sensor that a
  reader samples often (:meth:`BME280.sampled_every`): the standby is the longest whose cycle
  is at most :data:`FRESH_SHARE` of the interval, so a reading is barely older than a forced
  one would be (an automation reacts as fast). The chip does not run on after its reader has
  gone: :meth:`BME280.sleep` (on close and on an emergency stop) puts it back to sleep.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import ClassVar

from clawseed_edge.api import SensorDataInvalid

from ...sensor_driver import Quantity, Transport, check_values
from ..smbus import SMBusLike

__all__ = ["BME280", "BME280Calibration", "compensate", "standby_for"]

REG_CALIB_00 = 0x88  # 0x88..0xA1: dig_T1..dig_P9, (0xA0 unused), dig_H1
REG_CALIB_26 = 0xE1  # 0xE1..0xE7: dig_H2..dig_H6
REG_CHIP_ID = 0xD0
REG_RESET = 0xE0
REG_CTRL_HUM = 0xF2
REG_STATUS = 0xF3
REG_CTRL_MEAS = 0xF4
REG_CONFIG = 0xF5
REG_DATA = 0xF7  # 0xF7..0xFE: press msb/lsb/xlsb, temp msb/lsb/xlsb, hum msb/lsb

CHIP_ID = 0x60
STATUS_MEASURING = 0x08
# osrs_t = x1 (001), osrs_p = x1 (001), then the mode bits: sleep 00, forced 01, normal 11
CTRL_MEAS_X1 = (0b001 << 5) | (0b001 << 2)
MODE_MASK = 0b11
MODE_SLEEP = 0b00
MODE_FORCED = 0b01
MODE_NORMAL = 0b11
CTRL_MEAS_FORCED = CTRL_MEAS_X1 | MODE_FORCED
CTRL_MEAS_NORMAL = CTRL_MEAS_X1 | MODE_NORMAL
CTRL_MEAS_SLEEP = CTRL_MEAS_X1 | MODE_SLEEP
CTRL_HUM_X1 = 0b001

#: t_sb, config bits 7..5 (datasheet table 27): standby seconds -> code, longest first.
STANDBY_CODES: tuple[tuple[float, int], ...] = (
    (1.0, 0b101),
    (0.5, 0b100),
    (0.25, 0b011),
    (0.125, 0b010),
    (0.0625, 0b001),
    (0.02, 0b111),
    (0.01, 0b110),
    (0.0005, 0b000),
)
#: Sampled at most this often (seconds), the chip runs in normal mode: each read saves the
#: thread a wake-up, for a few more measurements of the chip's (microamps). Sampled less
#: often, forced mode measures only what is read (the chip's lowest power).
NORMAL_MODE_MAX_INTERVAL_S = 2.0
#: In normal mode a measurement cycle lasts at most this share of the reader's interval: the
#: reading it gets is at most that much older than a forced measurement at the read.
FRESH_SHARE = 0.125

# Datasheet 9.1: t_measure,max = 1.25 + 2.3 * 1 + (2.3 * 1 + 0.575) + (2.3 * 1 + 0.575) ms.
MEASURE_MAX_S = 0.0093
# Raw ADC values the chip reports when a channel was skipped or never measured.
SKIPPED_20BIT = 0x80000
SKIPPED_16BIT = 0x8000


def _u16(lo: int, hi: int) -> int:
    return lo | (hi << 8)


def _s16(lo: int, hi: int) -> int:
    value = _u16(lo, hi)
    return value - 0x10000 if value & 0x8000 else value


def _s12(value: int) -> int:
    return value - 0x1000 if value & 0x800 else value


def _s8(value: int) -> int:
    return value - 0x100 if value & 0x80 else value


@dataclass(frozen=True, slots=True)
class BME280Calibration:
    """The chip's trimming parameters (datasheet table 16), fixed at the factory."""

    T1: int
    T2: int
    T3: int
    P1: int
    P2: int
    P3: int
    P4: int
    P5: int
    P6: int
    P7: int
    P8: int
    P9: int
    H1: int = 0
    H2: int = 0
    H3: int = 0
    H4: int = 0
    H5: int = 0
    H6: int = 0

    @classmethod
    def from_registers(cls, block1: list[int], block2: list[int]) -> BME280Calibration:
        """Decode 26 bytes from 0x88 and 7 bytes from 0xE1 (little-endian; H4/H5 are 12-bit
        values that share register 0xE5)."""
        b, h = block1, block2
        if len(b) != 26 or len(h) != 7:
            raise SensorDataInvalid(
                f"bme280: trimming registers came back short ({len(b)}+{len(h)} of 26+7 bytes)"
            )
        return cls(
            T1=_u16(b[0], b[1]),
            T2=_s16(b[2], b[3]),
            T3=_s16(b[4], b[5]),
            P1=_u16(b[6], b[7]),
            P2=_s16(b[8], b[9]),
            P3=_s16(b[10], b[11]),
            P4=_s16(b[12], b[13]),
            P5=_s16(b[14], b[15]),
            P6=_s16(b[16], b[17]),
            P7=_s16(b[18], b[19]),
            P8=_s16(b[20], b[21]),
            P9=_s16(b[22], b[23]),
            H1=b[25],
            H2=_s16(h[0], h[1]),
            H3=h[2],
            H4=_s12((h[3] << 4) | (h[4] & 0x0F)),
            H5=_s12((h[5] << 4) | (h[4] >> 4)),
            H6=_s8(h[6]),
        )

    def check(self) -> None:
        """Refuse trimming that cannot come from a working chip.

        An erased or unreadable NVM reads as all 0x00 or all 0xFF; dig_T1 and dig_P1 are then
        0 or 65535 and the pressure formula would divide by zero.
        """
        if self.T1 in (0, 0xFFFF) or self.P1 in (0, 0xFFFF):
            raise SensorDataInvalid(
                f"bme280: the trimming registers look erased (dig_T1={self.T1}, dig_P1={self.P1}); "
                "the chip is damaged or this is not a BME280"
            )


def compensate_temperature(cal: BME280Calibration, adc_t: int) -> tuple[float, float]:
    """(degrees C, t_fine) from the raw 20-bit temperature (datasheet 8.1, double)."""
    var1 = (adc_t / 16384.0 - cal.T1 / 1024.0) * cal.T2
    var2 = ((adc_t / 131072.0 - cal.T1 / 8192.0) ** 2) * cal.T3
    t_fine = var1 + var2
    return t_fine / 5120.0, t_fine


def compensate_pressure(cal: BME280Calibration, adc_p: int, t_fine: float) -> float:
    """Pascal from the raw 20-bit pressure and t_fine (datasheet 8.1, double).

    Raises:
        SensorDataInvalid: The formula would divide by zero (bad trimming).
    """
    var1 = t_fine / 2.0 - 64000.0
    var2 = var1 * var1 * cal.P6 / 32768.0
    var2 = var2 + var1 * cal.P5 * 2.0
    var2 = var2 / 4.0 + cal.P4 * 65536.0
    var1 = (cal.P3 * var1 * var1 / 524288.0 + cal.P2 * var1) / 524288.0
    var1 = (1.0 + var1 / 32768.0) * cal.P1
    if var1 == 0.0:
        raise SensorDataInvalid("bme280: pressure compensation divides by zero (dig_P1 is 0)")
    p = 1048576.0 - adc_p
    p = (p - var2 / 4096.0) * 6250.0 / var1
    var1 = cal.P9 * p * p / 2147483648.0
    var2 = p * cal.P8 / 32768.0
    return p + (var1 + var2 + cal.P7) / 16.0


def compensate_humidity(cal: BME280Calibration, adc_h: int, t_fine: float) -> float:
    """%RH from the raw 16-bit humidity and t_fine (datasheet 8.1, double), clamped 0..100
    as the datasheet's formula does."""
    h = t_fine - 76800.0
    h = (adc_h - (cal.H4 * 64.0 + cal.H5 / 16384.0 * h)) * (
        cal.H2 / 65536.0 * (1.0 + cal.H6 / 67108864.0 * h * (1.0 + cal.H3 / 67108864.0 * h))
    )
    h = h * (1.0 - cal.H1 * h / 524288.0)
    return min(100.0, max(0.0, h))


def compensate(cal: BME280Calibration, adc_t: int, adc_p: int, adc_h: int) -> dict[str, float]:
    """Temperature (degrees C), pressure (hPa) and humidity (%RH) from raw ADC values."""
    temperature, t_fine = compensate_temperature(cal, adc_t)
    pressure_pa = compensate_pressure(cal, adc_p, t_fine)
    humidity = compensate_humidity(cal, adc_h, t_fine)
    return {"temperature": temperature, "humidity": humidity, "pressure": pressure_pa / 100.0}


def standby_for(interval_s: float) -> tuple[float, int]:
    """(t_sb seconds, its config code) for a reader every ``interval_s`` seconds: the longest
    standby whose cycle (standby plus a measurement) is at most :data:`FRESH_SHARE` of the
    interval (62.5 ms at 1 s); the shortest (0.5 ms) for a faster reader."""
    for standby_s, code in STANDBY_CODES:
        if standby_s + MEASURE_MAX_S <= interval_s * FRESH_SHARE:
            return standby_s, code
    return STANDBY_CODES[-1]


def _decode(raw: list[int]) -> tuple[int, int, int]:
    """(adc_T, adc_P, adc_H) from the 8 data registers 0xF7..0xFE."""
    if len(raw) != 8:
        raise SensorDataInvalid(f"bme280: data registers came back short ({len(raw)} of 8)")
    adc_p = (raw[0] << 12) | (raw[1] << 4) | (raw[2] >> 4)
    adc_t = (raw[3] << 12) | (raw[4] << 4) | (raw[5] >> 4)
    adc_h = (raw[6] << 8) | raw[7]
    if adc_t == SKIPPED_20BIT or adc_p == SKIPPED_20BIT or adc_h == SKIPPED_16BIT:
        raise SensorDataInvalid(
            "bme280: the chip returned its 'not measured' value; the measurement did not run "
            "(power or reset problem)"
        )
    return adc_t, adc_p, adc_h


class BME280:
    """A BME280 on an I2C bus, read in forced mode, or in normal mode while sampled often.

    Args:
        bus: An SMBus-like bus (smbus2 or the simulated bus).
        address: 0x76 (SDO to GND) or 0x77 (SDO to VDDIO).

    Values: temperature in degrees C (-40..85), humidity in %RH (0..100), pressure in hPa
    (300..1100), the datasheet's operating ranges; outside them a reading is an error.

    :meth:`sampled_every` chooses the mode; the next read applies it.
    """

    driver_name: ClassVar[str] = "bme280"
    transport: ClassVar[Transport] = "i2c"
    addresses: ClassVar[tuple[int, ...]] = (0x76, 0x77)
    quantities: ClassVar[tuple[Quantity, ...]] = (
        Quantity("temperature", "°C", -40.0, 85.0, 1),
        Quantity("humidity", "%RH", 0.0, 100.0, 1),
        Quantity("pressure", "hPa", 300.0, 1100.0, 1),
    )
    min_interval_s: ClassVar[float] = 1.0
    summary: ClassVar[str] = "Bosch BME280 temperature, humidity, pressure (I2C 0x76/0x77)"

    def __init__(self, bus: SMBusLike, address: int = 0x76) -> None:
        self.bus = bus
        self.address = address
        self.calibration: BME280Calibration | None = None
        # (t_sb seconds, its code) wanted, None for forced mode: one attribute, so that a
        # reader on another thread sees a whole choice.
        self._standby: tuple[float, int] | None = None
        # The t_sb code the chip runs in normal mode with (None: it sleeps, as after power-on).
        self._running: int | None = None

    def setup(self) -> None:
        """Check the chip id, read the trimming parameters and put the chip to sleep.

        Raises:
            SensorDataInvalid: Another chip answers (a BMP280 has id 0x58), or erased trimming.
        """
        chip = self.bus.read_byte_data(self.address, REG_CHIP_ID)
        if chip != CHIP_ID:
            other = " (a BMP280: it has no humidity sensor)" if chip in (0x56, 0x57, 0x58) else ""
            raise SensorDataInvalid(
                f"bme280 at 0x{self.address:02x}: chip id is 0x{chip:02x}, a BME280 says 0x60"
                f"{other}; check the driver in the config"
            )
        block1 = self.bus.read_i2c_block_data(self.address, REG_CALIB_00, 26)
        block2 = self.bus.read_i2c_block_data(self.address, REG_CALIB_26, 7)
        calibration = BME280Calibration.from_registers(list(block1), list(block2))
        calibration.check()
        self.calibration = calibration
        # Set up again after a failure, the chip may still run in normal mode: from sleep,
        # the next read starts whichever mode is wanted, with a config the chip takes.
        self._running = None
        self.bus.write_byte_data(self.address, REG_CTRL_MEAS, CTRL_MEAS_SLEEP)

    def sampled_every(self, interval_s: float | None) -> None:
        """Be read about every ``interval_s`` seconds from now on (None: only when asked).

        At most :data:`NORMAL_MODE_MAX_INTERVAL_S`, the next read starts normal mode with the
        standby of :func:`standby_for` (for at least :attr:`min_interval_s`: faster reads are
        served from the cache); otherwise reads are forced measurements (the chip is put to
        sleep at the next read). No bus access: safe from any thread.
        """
        if interval_s is not None and 0 < interval_s <= NORMAL_MODE_MAX_INTERVAL_S:
            self._standby = standby_for(max(interval_s, self.min_interval_s))
        else:
            self._standby = None

    @property
    def standby_s(self) -> float | None:
        """The normal mode's t_sb in seconds that reads use, None for forced mode."""
        standby = self._standby
        return None if standby is None else standby[0]

    def sleep(self) -> None:
        """Stop normal mode: the chip sleeps, as after power-on (nothing to do in forced mode,
        where it sleeps between reads). The next read starts it again if it is still wanted."""
        if self._running is not None:
            self._running = None
            self.bus.write_byte_data(self.address, REG_CTRL_MEAS, CTRL_MEAS_SLEEP)

    def read(self) -> dict[str, float]:
        """The latest measurement, compensated and checked.

        Forced mode: one new measurement (blocks about 10 ms). Normal mode: one burst read of
        the chip's latest result, no wait (the first read after starting it waits for the
        first measurement).

        Raises:
            SensorDataInvalid: The chip's 'not measured' value, a measurement that does not
                finish, an impossible value.
        """
        if self.calibration is None:
            self.setup()
        assert self.calibration is not None
        standby = self._standby
        if standby is None:
            adc = self._read_forced()
        else:
            adc = self._read_normal(standby[1])
        return check_values(self.driver_name, self.quantities, compensate(self.calibration, *adc))

    def _read_forced(self) -> tuple[int, int, int]:
        if self._running is not None:
            self.sleep()  # a forced measurement starts from sleep mode (datasheet 3.3.3)
        # ctrl_hum takes effect only after a write to ctrl_meas (datasheet 5.4.3).
        self.bus.write_byte_data(self.address, REG_CTRL_HUM, CTRL_HUM_X1)
        self.bus.write_byte_data(self.address, REG_CTRL_MEAS, CTRL_MEAS_FORCED)
        self._wait_for_measurement()
        return _decode(list(self.bus.read_i2c_block_data(self.address, REG_DATA, 8)))

    def _read_normal(self, code: int) -> tuple[int, int, int]:
        if self._running == code:
            # One burst from ctrl_meas to the last data register: the mode bits say whether
            # the chip still runs (a brown-out resets it to sleep, with its data registers
            # reset to 'not measured', or frozen at the last result if only the mode changed).
            block = list(self.bus.read_i2c_block_data(self.address, REG_CTRL_MEAS, 11))
            if len(block) == 11 and block[0] & MODE_MASK == MODE_NORMAL:
                return _decode(block[3:])
            self._running = None
        self._start_normal(code)
        self._wait_for_measurement()
        return _decode(list(self.bus.read_i2c_block_data(self.address, REG_DATA, 8)))

    def _start_normal(self, code: int) -> None:
        if self._running is not None:
            self.sleep()  # config writes are ignored in normal mode (datasheet 5.4.6)
        self.bus.write_byte_data(self.address, REG_CONFIG, code << 5)  # filter off, I2C
        self.bus.write_byte_data(self.address, REG_CTRL_HUM, CTRL_HUM_X1)
        self.bus.write_byte_data(self.address, REG_CTRL_MEAS, CTRL_MEAS_NORMAL)
        self._running = code

    def _wait_for_measurement(self) -> None:
        time.sleep(MEASURE_MAX_S)
        # The datasheet's maximum has passed; poll a few times in case the clock runs slow.
        for _ in range(10):
            if not self.bus.read_byte_data(self.address, REG_STATUS) & STATUS_MEASURING:
                return
            time.sleep(0.002)
        raise SensorDataInvalid(
            "bme280: the measurement did not finish within 30 ms (status stays 'measuring')"
        )

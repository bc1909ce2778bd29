"""A register-level BME280 model: trimming registers, forced and normal mode, raw ADC values.

The model serves the trimming parameters of a real chip (temperature and pressure from the
BMP280 datasheet's worked example, humidity from a typical part) and raw ADC values that the
driver must compensate: at once when a forced measurement is triggered, and in normal mode on
the chip's own cycle (a measurement, then the standby t_sb latched from ``config`` when normal
mode starts; section 3.3.4), so a change shows in the data registers only once a measurement
that started after it has finished. Like the chip, it ignores ``config`` writes in normal mode. To turn a requested
``temperature=21.5`` into a raw value it searches with the datasheet's *integer* compensation
(section 8.2, 32/64-bit fixed point), while the driver uses the double-precision formulas of
section 8.1: two independent implementations of the datasheet meet in the tests.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from .bus import RegisterChipModel

__all__ = ["EXAMPLE_TRIMMING", "MEASURE_S", "STANDBY_S", "BME280Model"]

#: How long one measurement takes at 1x oversampling of all three channels: the datasheet's
#: typical t_measure (section 9.1: 1 + 2 + 2.5 + 2.5 ms); the driver waits for the maximum.
MEASURE_S = 0.008
#: t_sb by its config code (datasheet table 27), seconds.
STANDBY_S = (0.0005, 0.0625, 0.125, 0.25, 0.5, 1.0, 0.01, 0.02)

EXAMPLE_TRIMMING: dict[str, int] = {
    "T1": 27504,
    "T2": 26435,
    "T3": -1000,
    "P1": 36477,
    "P2": -10685,
    "P3": 3024,
    "P4": 2855,
    "P5": 140,
    "P6": -7,
    "P7": 15500,
    "P8": -14600,
    "P9": 6000,
    "H1": 75,
    "H2": 362,
    "H3": 0,
    "H4": 313,
    "H5": 50,
    "H6": 30,
}
"""dig_* values: T/P from the BMP280 datasheet's example, H from a typical BME280."""


def _le16(value: int) -> tuple[int, int]:
    value &= 0xFFFF
    return value & 0xFF, value >> 8


class BME280Model(RegisterChipModel):
    """A simulated BME280.

    Args:
        temperature: Degrees C the chip measures.
        humidity: %RH.
        pressure: hPa.
        trimming: dig_* parameters (default :data:`EXAMPLE_TRIMMING`).
        chip_id: What register 0xD0 answers (0x58 makes it a BMP280).
        clock: Monotonic seconds, for the normal mode's cycle.

    ``set(temperature=..., humidity=..., pressure=...)`` changes the environment; the next
    measurement picks it up. ``set_raw(adc_t=..)`` serves raw values directly (faults).

    Attributes:
        measurements: Measurements whose result reached the data registers (in normal mode,
            counted when the registers are read).
    """

    def __init__(
        self,
        *,
        temperature: float = 21.0,
        humidity: float = 45.0,
        pressure: float = 1013.25,
        trimming: dict[str, int] | None = None,
        chip_id: int = 0x60,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__()
        self.clock = clock
        self.t = dict(trimming or EXAMPLE_TRIMMING)
        self.chip_id = chip_id
        self.environment = {"temperature": temperature, "humidity": humidity, "pressure": pressure}
        self.raw_override: dict[str, int] = {}
        self.measurements = 0
        self._reset()

    def _reset(self) -> None:
        r = self.registers
        r[:] = bytes(256)
        r[0xD0] = self.chip_id
        t = self.t
        words = [t["T1"], t["T2"], t["T3"], *(t[f"P{i}"] for i in range(1, 10))]
        for i, word in enumerate(words):
            r[0x88 + 2 * i], r[0x89 + 2 * i] = _le16(word)
        r[0xA1] = t["H1"]
        r[0xE1], r[0xE2] = _le16(t["H2"])
        r[0xE3] = t["H3"]
        h4, h5 = t["H4"] & 0xFFF, t["H5"] & 0xFFF
        r[0xE4] = h4 >> 4
        r[0xE5] = (h4 & 0x0F) | ((h5 & 0x0F) << 4)
        r[0xE6] = h5 >> 4
        r[0xE7] = t["H6"] & 0xFF
        # Data registers hold the "skipped" values until something is measured.
        r[0xF7:0xFF] = bytes([0x80, 0, 0, 0x80, 0, 0, 0x80, 0])
        self._osrs_h_latched = 0
        self._normal_since: float | None = None  # when normal mode started
        self._cycle_s = 0.0
        self._cycles_done = 0

    @property
    def mode(self) -> str:
        """``sleep``, ``forced`` (only while a forced measurement runs: never, here) or
        ``normal``, from ctrl_meas's mode bits."""
        return {0: "sleep", 3: "normal"}.get(self.registers[0xF4] & 0x03, "forced")

    @property
    def standby_s(self) -> float | None:
        """The t_sb the chip runs with in normal mode (None in sleep mode)."""
        if self._normal_since is None:
            return None
        return self._cycle_s - MEASURE_S

    def set(self, **values: float) -> None:
        """Set ``temperature`` (degrees C), ``humidity`` (%RH) and/or ``pressure`` (hPa)."""
        unknown = set(values) - set(self.environment)
        if unknown:
            raise TypeError(
                f"BME280Model.set(): unknown {sorted(unknown)}; it measures "
                f"{', '.join(self.environment)}"
            )
        self._catch_up()  # what the chip measured before the change stays measured
        self.environment.update(values)
        self.raw_override.clear()

    def set_raw(self, **raw: int) -> None:
        """Serve these raw ADC values (``adc_t``, ``adc_p``, ``adc_h``) instead of computed ones."""
        self._catch_up()
        self.raw_override.update(raw)

    # --- registers ----------------------------------------------------------------------------

    def write_register(self, register: int, value: int) -> None:
        if register == 0xE0:
            if value == 0xB6:
                self._reset()
            return
        if register < 0xF2 or register > 0xF5 or register == 0xF3:
            return  # read-only (trimming, id, status, data)
        if register == 0xF5 and self._normal_since is not None:
            return  # "writes to the config register in normal mode may be ignored" (5.4.6)
        self.registers[register] = value
        if register == 0xF4:
            # ctrl_hum only takes effect with a write to ctrl_meas (datasheet 5.4.3).
            self._osrs_h_latched = self.registers[0xF2] & 0x07
            mode = value & 0x03
            if mode == 0x03:
                if self._normal_since is None:  # already running: the cycle goes on
                    self._normal_since = self.clock()
                    self._cycles_done = 0
                    self._cycle_s = MEASURE_S + STANDBY_S[self.registers[0xF5] >> 5]
            else:
                self._normal_since = None
                if mode in (0x01, 0x02):
                    self._measure(value)

    def read_register(self, register: int) -> int:
        if register in (0xF3, 0xF7):
            # A read of status, or a burst from the data registers' start: what the chip's
            # own cycle has measured by now.
            self._catch_up()
        return self.registers[register]

    def _catch_up(self) -> None:
        """In normal mode: the measurements finished since the last look, of the environment
        as it was then (the latest one's result in the data registers), and the status."""
        if self._normal_since is None:
            return
        elapsed = self.clock() - self._normal_since
        if elapsed >= MEASURE_S:
            done = int((elapsed - MEASURE_S) // self._cycle_s) + 1
            if done > self._cycles_done:
                self._cycles_done = done
                self._measure(self.registers[0xF4])
        measuring = elapsed % self._cycle_s < MEASURE_S
        self.registers[0xF3] = 0x08 if measuring else 0x00

    def _measure(self, ctrl_meas: int) -> None:
        self.measurements += 1
        adc_t, adc_p, adc_h = self.raw_values()
        r = self.registers
        if ctrl_meas >> 5:
            r[0xFA], r[0xFB], r[0xFC] = adc_t >> 12, (adc_t >> 4) & 0xFF, (adc_t & 0x0F) << 4
        if (ctrl_meas >> 2) & 0x07:
            r[0xF7], r[0xF8], r[0xF9] = adc_p >> 12, (adc_p >> 4) & 0xFF, (adc_p & 0x0F) << 4
        if self._osrs_h_latched:
            r[0xFD], r[0xFE] = adc_h >> 8, adc_h & 0xFF
        if ctrl_meas & 0x03 != 0x03:
            r[0xF4] = ctrl_meas & ~0x03  # a forced measurement: back to sleep mode once done

    # --- the integer compensation, inverted -----------------------------------------------------

    def raw_values(self) -> tuple[int, int, int]:
        """(adc_T, adc_P, adc_H) for the current environment (or the raw override)."""
        env = self.environment
        adc_t = self.raw_override.get("adc_t")
        if adc_t is None:
            want = round(env["temperature"] * 100)
            adc_t = _search(lambda a: self.temperature_int(a)[0], want, 1 << 20, rising=True)
        t_fine = self.temperature_int(adc_t)[1]
        adc_p = self.raw_override.get("adc_p")
        if adc_p is None:
            want = round(env["pressure"] * 100 * 256)
            adc_p = _search(lambda a: self.pressure_int(a, t_fine), want, 1 << 20, rising=False)
        adc_h = self.raw_override.get("adc_h")
        if adc_h is None:
            want = round(env["humidity"] * 1024)
            adc_h = _search(lambda a: self.humidity_int(a, t_fine), want, 1 << 16, rising=True)
        return adc_t, adc_p, adc_h

    def temperature_int(self, adc_t: int) -> tuple[int, int]:
        """(temperature in 0.01 degrees C, t_fine): datasheet's 32-bit integer formula."""
        t1, t2, t3 = self.t["T1"], self.t["T2"], self.t["T3"]
        var1 = (((adc_t >> 3) - (t1 << 1)) * t2) >> 11
        var2 = (((((adc_t >> 4) - t1) * ((adc_t >> 4) - t1)) >> 12) * t3) >> 14
        t_fine = var1 + var2
        return (t_fine * 5 + 128) >> 8, t_fine

    def pressure_int(self, adc_p: int, t_fine: int) -> int:
        """Pressure in Pa as Q24.8 (Pa * 256): datasheet's 64-bit integer formula."""
        p1, p2, p3, p4, p5, p6, p7, p8, p9 = (self.t[f"P{i}"] for i in range(1, 10))
        var1 = t_fine - 128000
        var2 = var1 * var1 * p6
        var2 = var2 + ((var1 * p5) << 17)
        var2 = var2 + (p4 << 35)
        var1 = ((var1 * var1 * p3) >> 8) + ((var1 * p2) << 12)
        var1 = (((1 << 47) + var1) * p1) >> 33
        if var1 == 0:
            return 0
        p = 1048576 - adc_p
        p = _c_div(((p << 31) - var2) * 3125, var1)
        var1 = (p9 * (p >> 13) * (p >> 13)) >> 25
        var2 = (p8 * p) >> 19
        return ((p + var1 + var2) >> 8) + (p7 << 4)

    def humidity_int(self, adc_h: int, t_fine: int) -> int:
        """Humidity in %RH as Q22.10 (%RH * 1024): datasheet's 32-bit integer formula."""
        h1, h2, h3, h4, h5, h6 = (self.t[f"H{i}"] for i in range(1, 7))
        v = t_fine - 76800
        v = ((((adc_h << 14) - (h4 << 20) - (h5 * v)) + 16384) >> 15) * (
            ((((((v * h6) >> 10) * (((v * h3) >> 11) + 32768)) >> 10) + 2097152) * h2 + 8192) >> 14
        )
        v = v - (((((v >> 15) * (v >> 15)) >> 7) * h1) >> 4)
        v = min(max(v, 0), 419430400)
        return v >> 12


def _c_div(a: int, b: int) -> int:
    """C's integer division (truncates toward zero), unlike Python's floor division."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _search(fn: Callable[[int], int], want: int, limit: int, *, rising: bool) -> int:
    """The raw value in 0..limit-1 whose compensated value is closest to ``want`` (bisection
    over a monotonic formula)."""
    lo, hi = 0, limit - 1
    while lo < hi:
        mid = (lo + hi) // 2
        value = fn(mid)
        if (value < want) if rising else (value > want):
            lo = mid + 1
        else:
            hi = mid
    best = lo
    if lo > 0 and abs(fn(lo - 1) - want) < abs(fn(lo) - want):
        best = lo - 1
    return best

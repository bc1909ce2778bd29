"""BME280 forced and normal mode on the simulated bus: the register writes (mode bits, t_sb),
one burst read with no wait in normal mode, and sleep on close and on an emergency stop."""

from __future__ import annotations

import types

import pytest

from clawseed_edge.peripherals.i2c.drivers import bme280
from clawseed_edge.peripherals.i2c.drivers.bme280 import BME280, standby_for
from clawseed_edge.peripherals.i2c.sim import BME280Model, SimI2CBus


class Clock:
    """The model's clock; the driver's sleeps advance it (no wall time in these tests)."""

    def __init__(self) -> None:
        self.now = 50.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    clock = Clock()
    # The driver's module gets a time of its own: its sleeps advance the model's clock.
    fake_time = types.SimpleNamespace(sleep=clock.sleep)
    monkeypatch.setattr("clawseed_edge.peripherals.i2c.drivers.bme280.time", fake_time)
    return clock


Chip = tuple[SimI2CBus, BME280Model, BME280]


@pytest.fixture
def chip(clock: Clock) -> Chip:
    bus = SimI2CBus(1)
    model = BME280Model(temperature=20.0, clock=clock)
    bus.attach(0x76, model)
    driver = BME280(bus, 0x76)
    driver.setup()
    return bus, model, driver


@pytest.mark.parametrize(
    ("interval_s", "standby_s", "code"),
    [(60.0, 1.0, 0b101), (2.0, 0.125, 0b010), (1.0, 0.0625, 0b001), (0.5, 0.02, 0b111)],
)
def test_the_standby_is_the_longest_whose_cycle_is_an_eighth_of_the_interval(
    interval_s: float, standby_s: float, code: int
) -> None:
    assert standby_for(interval_s) == (standby_s, code)


def test_sampled_every_second_runs_normal_mode_with_t_sb_62_5_ms(chip: Chip, clock: Clock) -> None:
    bus, model, driver = chip
    driver.sampled_every(1.0)
    assert driver.read()["temperature"] == 20.0  # the first read waits for the first result
    assert model.mode == "normal" and model.standby_s == pytest.approx(0.0625)
    assert model.registers[0xF5] >> 5 == 0b001  # t_sb, written while the chip slept
    assert model.registers[0xF4] == (0b001 << 5) | (0b001 << 2) | 0b11  # x1, x1, normal
    assert model.registers[0xF2] & 0x07 == 0b001  # humidity x1
    # Then each read is one burst of the latest result: no sleep, one transfer.
    clock.slept.clear()
    model.set(temperature=24.0)
    clock.now += 1.0
    before = bus.transfers
    assert driver.read()["temperature"] == 24.0
    assert (bus.transfers - before, clock.slept) == (1, [])
    assert model.mode == "normal"


def test_normal_mode_reports_what_the_chips_cycle_measured(chip: Chip, clock: Clock) -> None:
    # Cycles of 8 ms measuring + 62.5 ms standby: results at 8, 78.5, 149 ... ms after start.
    _, model, driver = chip
    driver.sampled_every(1.0)
    driver.read()  # at 9.3 ms: the first result
    clock.now += 0.0907  # 100 ms: the second result (78.5 ms) measured 20 degrees
    model.set(temperature=30.0)
    clock.now += 0.02  # 120 ms: no measurement since the change
    assert driver.read()["temperature"] == 20.0
    clock.now += 0.04  # 160 ms: the third result (149 ms) has it
    assert driver.read()["temperature"] == 30.0


def test_a_sampler_faster_than_the_minimum_interval_gets_the_standby_of_that_interval(
    chip: Chip, clock: Clock
) -> None:
    _, model, driver = chip
    driver.sampled_every(0.1)  # reads inside the 1 s minimum interval come from the cache
    driver.read()
    assert model.standby_s == pytest.approx(0.0625)


def test_a_long_interval_keeps_forced_mode_and_the_chip_asleep(chip: Chip, clock: Clock) -> None:
    _, model, driver = chip
    driver.sampled_every(60.0)
    model.set(temperature=22.0)
    assert driver.read()["temperature"] == 22.0
    assert model.mode == "sleep" and model.measurements == 1
    assert clock.slept[0] == bme280.MEASURE_MAX_S  # a forced measurement waits for itself


def test_back_to_forced_mode_the_chip_sleeps_first(chip: Chip, clock: Clock) -> None:
    _, model, driver = chip
    driver.sampled_every(1.0)
    driver.read()
    driver.sampled_every(None)  # the reader stopped: reads when asked are forced
    model.set(temperature=26.0)
    assert driver.read()["temperature"] == 26.0
    assert model.mode == "sleep"


def test_a_new_interval_restarts_normal_mode_with_its_t_sb(chip: Chip, clock: Clock) -> None:
    _, model, driver = chip
    driver.sampled_every(1.0)
    driver.read()
    driver.sampled_every(2.0)
    clock.now += 1.0
    driver.read()
    # The chip ignores config writes in normal mode: the driver slept it to change t_sb.
    assert model.mode == "normal" and model.standby_s == pytest.approx(0.125)


def test_sleep_stops_normal_mode_and_the_next_read_starts_it_again(
    chip: Chip, clock: Clock
) -> None:
    bus, model, driver = chip
    driver.sampled_every(1.0)
    driver.read()
    driver.sleep()
    assert model.mode == "sleep"
    before = bus.transfers
    driver.sleep()  # idempotent: no bus access when it already sleeps
    assert bus.transfers == before
    clock.now += 1.0
    driver.read()
    assert model.mode == "normal"


def test_a_chip_reset_in_normal_mode_is_noticed_and_restarted(chip: Chip, clock: Clock) -> None:
    bus, model, driver = chip
    driver.sampled_every(1.0)
    driver.read()
    bus.write_byte_data(0x76, 0xE0, 0xB6)  # a soft reset (or a brown-out): sleep, no data
    model.set(temperature=27.0)
    clock.now += 1.0
    assert driver.read()["temperature"] == 27.0
    assert model.mode == "normal"


def test_setup_puts_a_chip_left_running_to_sleep(clock: Clock) -> None:
    bus = SimI2CBus(1)
    model = BME280Model(clock=clock)
    bus.attach(0x76, model)
    bus.write_byte_data(0x76, 0xF4, 0b11)  # another process left it in normal mode
    assert model.mode == "normal"
    BME280(bus, 0x76).setup()
    assert model.mode == "sleep"


async def test_the_bank_runs_normal_mode_for_its_sampler_and_sleeps_it_on_estop_and_close() -> None:
    from clawseed_edge.testing.sensors import sim_sensor_bank

    bank = sim_sensor_bank('[[sensors]]\nname = "air"\ndriver = "bme280"\n')
    async with bank:
        model = bank.sim.sensor("air")
        assert bank.read_ahead("air", ready_in_s=60.0, every_s=1.0)
        await bank.read("air")  # the next read applies the mode
        assert model.mode == "normal" and model.standby_s == pytest.approx(0.0625)
        await bank.apply_safe_state()
        assert model.mode == "sleep"
        bank._channel("air").last = None  # past the cache
        await bank.read("air")  # the sampler reads on: normal mode again
        assert model.mode == "normal"
    assert model.mode == "sleep"  # closed: nothing left measuring


async def test_the_bank_reads_forced_when_no_sampler_reads_often() -> None:
    from clawseed_edge.testing.sensors import sim_sensor_bank

    bank = sim_sensor_bank('[[sensors]]\nname = "air"\ndriver = "bme280"\n')
    async with bank:
        model = bank.sim.sensor("air")
        await bank.read("air")
        assert model.mode == "sleep"
        assert bank.read_ahead("air", ready_in_s=60.0, every_s=60.0)
        bank._channel("air").last = None  # past the cache
        await bank.read("air")
        assert model.mode == "sleep" and model.measurements == 2
        bank.read_ahead("air", 0.0, 0.0)

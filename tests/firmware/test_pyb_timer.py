"""The simulated ``pyb.Timer`` keeps a channel's compare value across a frequency change, as
real pyb does (issue 36, item 17): the firmware must set the duty again, and a lost re-set shows
in the pin's duty."""

from __future__ import annotations

from typing import Any

from clawseed_edge.peripherals.serial.sim_machine import (
    SimBoardState,
    make_machine,
    make_pyb,
    period_ticks,
)

from .conftest import CoreDriver


def test_a_frequency_change_keeps_the_compare_value_not_the_percentage() -> None:
    state = SimBoardState()
    machine = make_machine(state, machine_pwm=False)
    pyb = make_pyb(state, machine)
    timer = pyb.Timer(3, freq=1000)
    channel = timer.channel(1, pyb.Timer.PWM, pin=pyb.Pin("PB4"), pulse_width_percent=50)
    assert state.pwm["PB4"] == (1000, 32768)
    timer.freq(2000)  # the period goes from 16800 to 42000 ticks; the compare stays
    expected = 0.5 * period_ticks(1000) / period_ticks(2000)
    assert expected != 0.5
    assert state.pwm["PB4"] == (2000, round(expected * 65535))
    assert round(channel.pulse_width_percent(), 1) == round(expected * 100, 1)
    channel.pulse_width_percent(50)  # what the firmware does after a frequency change
    assert state.pwm["PB4"] == (2000, 32768)


def test_the_firmware_sets_the_duty_again_after_a_frequency_change() -> None:
    fw = CoreDriver()  # the pyb.Timer path (MicroPython up to v1.27)
    fw.ok("pwm.set", pin="D5", freq=1000, duty=0.5)  # PB4 alone on TIM3
    fw.ok("pwm.set", pin="D5", freq=2000, duty=0.5)
    assert fw.state.pwm == {"PB4": (2000, 32768)}


def test_a_lost_re_set_would_be_caught() -> None:
    # The firmware as it would be without the re-set: the duty the pin gets is wrong, so the
    # test above can fail.
    fw = CoreDriver()
    hw: Any = fw.core.hw
    fw.ok("pwm.set", pin="D5", freq=1000, duty=0.5)
    channel = hw._pwms["PB4"][1]
    channel.pulse_width_percent = lambda percent=None: None  # the re-set is lost
    fw.ok("pwm.set", pin="D5", freq=2000, duty=0.5)
    assert fw.state.pwm["PB4"] != (2000, 32768)

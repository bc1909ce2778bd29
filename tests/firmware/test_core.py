"""The firmware core on CPython over the simulated machine: every op, refusals, bounds."""

from __future__ import annotations

import json

import pytest

from .conftest import CoreDriver


def test_hello_reports_version_board_and_table_hash(fw: CoreDriver) -> None:
    from clawseed_edge.peripherals.boards import default_registry
    from clawseed_edge.peripherals.serial.bundle import firmware_version
    from clawseed_edge.peripherals.serial.pintable import table_hash

    hello = fw.ok("hello")
    assert hello["fw"] == firmware_version() and hello["proto"] == 1
    assert hello["board"] == "nucleo-f401re"
    assert hello["pins_hash"] == table_hash(default_registry().get("nucleo-f401re"))
    assert fw.ok("ping") == {"pong": True}


def test_write_read_toggle_by_port_name_header_and_alias(fw: CoreDriver) -> None:
    assert fw.ok("pin.write", pin="PA5", value=1) == {"value": 1}
    assert fw.state.level("PA5") == 1
    assert fw.ok("pin.read", pin="D13") == {"value": 1}
    assert fw.ok("pin.toggle", pin="led1") == {"value": 0}
    assert fw.state.history == [("PA5", 1), ("PA5", 0)]


def test_input_with_pull_and_external_level(fw: CoreDriver) -> None:
    assert fw.ok("pin.mode", pin="D2", mode="in", pull="up")["value"] == 1
    fw.state.drive_input("PA10", 0)
    assert fw.ok("pin.read", pin="PA10") == {"value": 0}


@pytest.mark.parametrize(
    ("op", "args", "code"),
    [
        ("pin.write", {"pin": "PA13", "value": 1}, "pin_reserved"),
        ("pin.write", {"pin": "CN7-13", "value": 1}, "pin_reserved"),
        ("pin.read", {"pin": "PA2"}, "pin_reserved"),
        ("pin.write", {"pin": "PZ9", "value": 1}, "pin_invalid"),
        ("pin.write", {"pin": "PC13", "value": 1}, "pin_mode"),
        ("pwm.set", {"pin": "PA4", "freq": 1000, "duty": 0.5}, "pin_mode"),
        ("adc.read", {"pin": "D2"}, "pin_mode"),
        ("pin.write", {"pin": "PA5", "value": 2}, "bad_args"),
        ("pin.write", {"value": 1}, "bad_args"),
        ("pwm.set", {"pin": "PA5", "freq": 0, "duty": 0.5}, "bad_args"),
        ("pwm.set", {"pin": "PA5", "freq": 1000, "duty": 1.5}, "bad_args"),
        ("i2c.read", {"addr": 200, "n": 1}, "bad_args"),
        ("i2c.write", {"addr": 0x40, "data": "zz"}, "bad_args"),
        ("watchdog", {"period_ms": 5}, "bad_args"),
        ("reboot", {}, "unknown_op"),
    ],
)
def test_refusals_name_the_problem(fw: CoreDriver, op: str, args: dict, code: str) -> None:
    assert fw.error(op, **args) == code
    assert fw.state.history == []


def test_reserved_refusal_says_why(fw: CoreDriver) -> None:
    reply = fw.request("pin.write", pin="PA13", value=1)
    assert "SWDIO" in reply["error"]["message"]


def test_pwm_and_shared_timer_channel_refused(fw: CoreDriver) -> None:
    assert fw.ok("pwm.set", pin="D4", freq=2000, duty=0.25)["pin"] == "PB5"
    assert fw.state.pwm["PB5"] == (2000, 16384)
    # D9 (PC7) is TIM3_CH2 too: two signals cannot come out of one channel.
    assert fw.error("pwm.set", pin="D9", freq=2000, duty=0.5) == "pin_in_use"
    fw.ok("pin.write", pin="D4", value=0)  # stops the PWM on D4
    assert "PB5" not in fw.state.pwm
    assert fw.ok("pwm.set", pin="D9", freq=50, duty=0.1)["pin"] == "PC7"


def test_one_frequency_per_timer(fw: CoreDriver) -> None:
    fw.ok("pwm.set", pin="D4", freq=50, duty=0.075)  # PB5, TIM3_CH2: a servo
    reply = fw.request("pwm.set", pin="D5", freq=1000, duty=0.5)  # PB4, TIM3_CH1: a lamp
    assert reply["error"]["code"] == "timer_in_use"
    message = reply["error"]["message"]
    assert "TIM3 runs at 50 Hz for PB5" in message
    assert "PA0 (TIM5)" in message and "PB3 (TIM2)" in message and "PA6" not in message
    assert "PB4" not in fw.state.pwm and fw.state.pwm["PB5"] == (50, 4915)
    fw.ok("pwm.set", pin="D5", freq=50, duty=0.5)  # the timer's own frequency is fine
    fw.ok("pwm.set", pin="D4", freq=50, duty=0.1)  # and so is a new duty on the same one


def test_timer_fallback_keeps_the_other_channels_of_a_timer_running() -> None:
    # stm32 MicroPython up to v1.27 has no machine.PWM: pyb.Timer channels, one counter each.
    fw = CoreDriver(machine_pwm=False)
    fw.ok("pwm.set", pin="D4", freq=1000, duty=0.25)  # PB5, TIM3_CH2
    fw.ok("pwm.set", pin="D5", freq=1000, duty=0.5)  # PB4, TIM3_CH1
    fw.ok("pwm.set", pin="D5", freq=1000, duty=0.75)  # a new duty: no new timer set-up
    assert fw.state.timer_inits == {3: 1}
    fw.ok("pin.write", pin="D4", value=0)  # one output off: the other runs on
    assert fw.state.pwm == {"PB4": (1000, 49151)} and fw.state.outputs["PB5"] == 0
    fw.ok("safe")  # the last one off: now the timer stops
    assert fw.state.pwm == {} and fw.state.timers == {}
    fw.ok("pwm.set", pin="D5", freq=1000, duty=0.5)
    fw.ok("pwm.set", pin="D5", freq=50, duty=0.5)  # alone on its timer: it may change it
    assert fw.state.pwm == {"PB4": (50, 32768)} and fw.state.timer_inits == {3: 2}


def test_adc_raw_and_volts(fw: CoreDriver) -> None:
    fw.state.adc["PA0"] = 32768
    assert fw.ok("adc.read", pin="A0") == {"raw": 32768, "volts": 1.65}


def test_i2c_scan_read_write(fw: CoreDriver) -> None:
    from clawseed_edge.peripherals.serial.sim_machine import SimI2CDevice

    fw.state.i2c[0x76] = SimI2CDevice()
    assert fw.ok("i2c.scan") == {"addresses": [0x76]}
    assert fw.ok("i2c.write", addr=0x76, reg=0xF4, data="27ff") == {"written": 2}
    assert fw.ok("i2c.read", addr=0x76, reg=0xF4, n=2) == {"data": "27ff"}
    assert fw.error("i2c.read", addr=0x40, n=1) == "hw_error"


def test_garbage_gets_a_protocol_error_and_the_core_keeps_going(fw: CoreDriver) -> None:
    replies = fw.core.feed(b'\x00\xffnot json\n[1,2]\n{"op":"ping"}\n')
    codes = [json.loads(r)["error"]["code"] for r in replies]
    assert codes == ["protocol", "protocol", "protocol"]
    assert all(json.loads(r)["id"] is None for r in replies)
    assert fw.ok("ping") == {"pong": True}


def test_overlong_line_is_dropped_whole_with_one_error(fw: CoreDriver) -> None:
    limit = fw.fw.MAX_LINE
    junk = b'{"id":1,"op":"pin.write","args":{"pin":"PA5","value":1}' + b" " * limit + b"}\n"
    replies = fw.core.feed(junk + b'{"id":2,"op":"ping"}\n')
    assert json.loads(replies[0])["error"]["code"] == "line_too_long"
    assert json.loads(replies[1]) == {"id": 2, "ok": True, "result": {"pong": True}}
    assert fw.state.history == []  # the long line's write never ran


def test_lines_split_across_feeds_and_crlf(fw: CoreDriver) -> None:
    assert fw.core.feed(b'{"id":5,"op":') == []
    replies = fw.core.feed(b'"ping"}\r\n')
    assert [json.loads(r)["id"] for r in replies] == [5]


def test_watchdog_returns_outputs_to_safe_after_host_silence(fw: CoreDriver) -> None:
    fw.ok("pin.mode", pin="PA5", mode="out", safe=0, value=1)
    fw.ok("pin.mode", pin="D7", mode="out", safe=1, value=0)
    fw.ok("pwm.set", pin="D3", freq=1000, duty=0.5)
    fw.ok("watchdog", period_ms=500)
    assert fw.advance(400) == []
    fw.ok("ping")  # the host is alive: the period starts again
    assert fw.advance(400) == []
    events = fw.advance(200)
    assert events == [{"event": "watchdog", "period_ms": 500, "safe": ["PA5", "PA8", "PB3"]}]
    assert fw.state.level("PA5") == 0 and fw.state.level("PA8") == 1
    assert fw.state.pwm == {}
    assert fw.advance(1000) == []  # reported once, not every tick


def test_watchdog_off_by_default_and_safe_op(fw: CoreDriver) -> None:
    fw.ok("pin.write", pin="PA5", value=1)
    assert fw.advance(60_000) == []
    assert fw.state.level("PA5") == 1
    assert fw.ok("safe") == {"safe": ["PA5"]}
    assert fw.state.level("PA5") == 0


def test_edges_become_events_with_debounce(fw: CoreDriver) -> None:
    fw.ok("pin.mode", pin="user_button", mode="in", edges="falling", bounce_ms=50)
    fw.state.drive_input("PC13", 1)
    assert fw.advance(10) == []  # a rising edge is not asked for
    fw.state.drive_input("PC13", 0)
    assert fw.advance(100) == [{"event": "edge", "pin": "PC13", "value": 0}]
    fw.state.drive_input("PC13", 1)
    fw.advance(10)
    fw.state.drive_input("PC13", 0)
    assert fw.advance(10) == []  # inside the bounce window


def test_reading_an_unconfigured_pin_makes_it_an_input_first(fw: CoreDriver) -> None:
    fw.state.drive_input("PA10", 1)
    assert fw.ok("pin.read", pin="D2") == {"value": 1}
    assert fw.state.modes["PA10"] == "in"


def test_the_package_expects_the_firmware_version_of_the_repository() -> None:
    from clawseed_edge.peripherals.serial.bundle import EXPECTED_FIRMWARE, firmware_version

    # Bump both together: the host refuses a board whose version differs.
    assert firmware_version() == EXPECTED_FIRMWARE


def test_the_hardware_watchdog_is_opt_in_fed_by_tick_and_never_stopped(fw: CoreDriver) -> None:
    assert fw.ok("hello")["hw_watchdog_ms"] == 0
    assert fw.state.wdt is None  # off until the host asks
    assert fw.ok("watchdog", period_ms=0, hardware_ms=1000) == {"period_ms": 0, "hardware_ms": 1000}
    assert fw.state.wdt is not None and fw.state.wdt[0] == 1000
    fed = fw.state.wdt[1]
    fw.advance(10)
    assert fw.state.wdt[1] >= fed  # each tick of the loop feeds it
    assert fw.ok("watchdog", period_ms=500, hardware_ms=1000)["hardware_ms"] == 1000
    reply = fw.request("watchdog", period_ms=0, hardware_ms=0)
    assert reply["error"]["code"] == "bad_args" and "cannot be stopped" in reply["error"]["message"]
    assert fw.error("watchdog", period_ms=0, hardware_ms=2000) == "bad_args"
    assert fw.ok("hello")["hw_watchdog_ms"] == 1000


def test_the_hardware_watchdog_timeout_is_bounded(fw: CoreDriver) -> None:
    assert fw.error("watchdog", period_ms=0, hardware_ms=100) == "bad_args"
    assert fw.error("watchdog", period_ms=0, hardware_ms=60000) == "bad_args"
    assert fw.state.wdt is None


def test_ping_with_a_session_says_which_one_this_boot_saw_before(fw: CoreDriver) -> None:
    assert fw.ok("ping") == {"pong": True}
    assert fw.ok("ping", session=7) == {"pong": True, "session": None}  # fresh since boot
    assert fw.ok("ping", session=7) == {"pong": True, "session": 7}
    assert fw.error("ping", session="x") == "bad_args"

"""SerialBoard: Nucleo devices on the virtual board (sim), the same devices as on a Pi."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import pytest

from clawseed_edge.api import (
    BoardDisconnected,
    ConfigInvalid,
    PinInUse,
    PinModeUnsupported,
    PinReserved,
    ToolArgumentsInvalid,
)
from clawseed_edge.peripherals.gpio import loads_hardware_toml
from clawseed_edge.peripherals.serial.board import SerialBoard
from clawseed_edge.peripherals.serial.link import LinkOptions

WIRING = """
[[devices]]
name = "green_led"
pin = "D13"
kind = "led"

[[devices]]
name = "fan"
pin = "D7"
kind = "relay"
active_high = false
max_switches_per_minute = 2

[[devices]]
name = "lamp"
pin = "D3"
kind = "pwm_led"
max_level = 0.5

[[devices]]
name = "arm"
pin = "D9"
kind = "servo"

[[devices]]
name = "button"
pin = "user_button"
kind = "button"
bounce_ms = 0
"""
FAST = LinkOptions(backoff_s=(0.05, 0.2), watchdog_ms=0)


def devices(text: str = WIRING):  # type: ignore[no-untyped-def]
    return loads_hardware_toml(text).devices


async def until(condition: Callable[[], bool], timeout_s: float = 20.0) -> None:
    for _ in range(int(timeout_s / 0.01)):
        if condition():
            return
        await asyncio.sleep(0.01)
    pytest.fail(f"condition not met within {timeout_s} s")


@pytest.fixture
async def nucleo() -> AsyncIterator[SerialBoard]:
    async with SerialBoard("nucleo-f401re", devices(), sim=True, options=FAST) as board:
        yield board


async def test_devices_are_set_up_at_their_initial_and_safe_levels(nucleo: SerialBoard) -> None:
    state = nucleo.virtual.state
    assert state.level("PA5") == 0
    assert state.level("PA8") == 1  # an active-low relay is off with the pin high
    assert state.pwm == {}
    assert nucleo.device("button").value == 0.0  # pulled up, not pressed


async def test_switch_toggle_level_and_servo(nucleo: SerialBoard) -> None:
    state = nucleo.virtual.state
    assert await nucleo.switch("green_led", True) == 1.0
    assert state.level("PA5") == 1
    assert await nucleo.toggle("green_led") == 0.0
    assert await nucleo.switch("fan", True) == 1.0 and state.level("PA8") == 0
    assert await nucleo.set_level("lamp", 0.25) == 0.25
    assert state.pwm["PB3"] == (1000, 16384)
    assert await nucleo.set_level("arm", 1.0) == 1.0
    assert state.pwm["PC7"] == (50, 6554)  # a 2.0 ms pulse every 20 ms
    with pytest.raises(ToolArgumentsInvalid, match=r"outside lamp.s allowed range 0\.\.0\.5"):
        await nucleo.set_level("lamp", 0.9)
    with pytest.raises(PinModeUnsupported):
        await nucleo.switch("button", True)


async def test_safe_state_done_by_the_firmware(nucleo: SerialBoard) -> None:
    await nucleo.switch("fan", True)
    await nucleo.switch("green_led", True)
    await nucleo.set_level("lamp", 0.5)
    await nucleo.apply_safe_state()
    state = nucleo.virtual.state
    assert state.level("PA5") == 0 and state.level("PA8") == 1 and state.pwm == {}
    assert nucleo.device("green_led").value == 0.0 and nucleo.device("arm").value is None


async def test_button_press_becomes_an_input_event(nucleo: SerialBoard) -> None:
    seen = []
    nucleo.add_listener(seen.append)
    nucleo.virtual.state.drive_input("PC13", 0)  # pressed: pulled-up button to ground
    await until(lambda: bool(seen))
    assert (seen[0].device, seen[0].value, seen[0].pin) == ("button", 1, "PC13")
    assert await nucleo.read("button") == 1.0


async def test_unplugged_then_back_reconfigures_the_devices(nucleo: SerialBoard) -> None:
    await nucleo.switch("green_led", True)
    nucleo.virtual.unplug()
    await until(lambda: not nucleo.connected)
    health = await nucleo.health_check()
    assert not health.healthy and "disconnected" in health.detail
    with pytest.raises(BoardDisconnected):
        await nucleo.switch("green_led", False)
    nucleo.virtual.replug()
    await until(lambda: nucleo.connected)
    assert (await nucleo.health_check()).healthy
    assert nucleo.virtual.state.level("PA8") == 1  # the relay was set up again, off
    assert await nucleo.switch("green_led", True) == 1.0


async def test_disconnect_applies_the_safe_state_and_is_idempotent() -> None:
    board = SerialBoard("nucleo-f401re", devices(), sim=True, options=FAST)
    await board.connect()
    virtual = board.virtual
    state = virtual.state
    await board.switch("green_led", True)
    await board.disconnect()
    await board.disconnect()
    assert state.level("PA5") == 0 and board.virtual is None


def test_wiring_refused_on_the_host() -> None:
    with pytest.raises(PinReserved, match="SWDIO"):
        SerialBoard("nucleo-f401re", devices('[[devices]]\nname="x"\npin="PA13"\nkind="led"\n'))
    with pytest.raises(PinModeUnsupported, match="PC13"):
        SerialBoard("nucleo-f401re", devices('[[devices]]\nname="x"\npin="PC13"\nkind="led"\n'))
    two_on_tim3_ch2 = (
        '[[devices]]\nname="a"\npin="D4"\nkind="pwm_led"\n'
        '[[devices]]\nname="b"\npin="D9"\nkind="servo"\n'
    )
    with pytest.raises(PinInUse, match="TIM3_CH2"):
        SerialBoard("nucleo-f401re", devices(two_on_tim3_ch2))
    with pytest.raises(ConfigInvalid, match="pin level"):
        SerialBoard(
            "nucleo-f401re", devices('[[devices]]\nname="x"\npin="D3"\nkind="pwm_led"\nsafe=0.3\n')
        )


async def test_button_edges_become_rule_messages_like_pi_buttons() -> None:
    from clawseed_edge.peripherals.wired import InputRules

    wiring = WIRING.replace("bounce_ms = 0", 'bounce_ms = 0\non_press = "B1 was pressed"')
    async with SerialBoard("nucleo-f401re", devices(wiring), sim=True, options=FAST) as board:
        rules = InputRules(board.hardware.devices)
        async with board.events() as events:
            board.virtual.state.drive_input("PC13", 0)
            async with asyncio.timeout(20):  # a bound, not a measurement
                message = await anext(rules.messages(events))
    assert (message.device, message.text) == ("button", "B1 was pressed")


async def test_pin_states_give_the_last_known_values_without_io(nucleo: SerialBoard) -> None:
    await nucleo.switch("green_led", True)
    states = nucleo.pin_states()
    assert states["PA5"] == {
        "pin": "PA5", "device": "green_led", "kind": "led", "mode": "output", "value": 1.0,
        "level": 1.0, "frequency": None,
    }  # fmt: skip
    assert states["PC13"]["mode"] == "input"


ESTOP_WIRING = """
[[devices]]
name = "door"
pin = "D7"
kind = "relay"
initial = "on"

[[devices]]
name = "lamp"
pin = "D5"
kind = "pwm_led"
initial = "on"

[[devices]]
name = "button"
pin = "user_button"
kind = "button"
"""


def test_estop_on_a_nucleo_never_passes_through_initial(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from clawseed_edge.cli.hardware_cmd import estop
    from clawseed_edge.peripherals.serial.sim_machine import PinChange
    from clawseed_edge.peripherals.serial.virtual import VirtualBoard

    with VirtualBoard("nucleo-f401re") as virtual:
        changes: list[PinChange] = []
        virtual.state.listeners.append(changes.append)
        board = SerialBoard("nucleo-f401re", devices(ESTOP_WIRING), port=virtual.path, options=FAST)
        assert estop([board]) == 0
        history = list(virtual.state.history)
    # The relay with initial = "on" is driven only to its safe level, the lamp never lit.
    assert history and all(level == 0 for _, level in history)
    assert not any(c.freq for c in changes) and not any(c.level for c in changes)
    out = capsys.readouterr().out
    assert "door (PA8): safe value off applied (level 0.0)" in out
    assert "lamp (PB4): safe value off applied (level 0.0)" in out
    assert "estop: 2 outputs on nucleo-f401re in their safe state" in out


async def test_pin_states_of_a_nucleo_carry_the_line_level() -> None:
    async with SerialBoard("nucleo-f401re", devices(), sim=True, options=FAST) as board:
        await board.switch("fan", True)
        await board.set_level("lamp", 0.25)
        states = board.pin_states()
    assert states["PA8"]["level"] == 0.0  # active-low relay on: the line is low
    assert states["PB3"]["level"] == 0.25 and states["PB3"]["frequency"] == 1000
    assert states["PB3"]["mode"] == "pwm"
    assert states["PA5"]["level"] == 0.0 and states["PC13"]["level"] == 1.0  # button pulled up


def test_two_frequencies_on_one_timer_are_refused_at_load() -> None:
    # D4 is TIM3_CH2, D5 TIM3_CH1: a servo's 50 Hz beside a lamp's 1 kHz on one counter.
    wiring = (
        '[[devices]]\nname="arm"\npin="D4"\nkind="servo"\n'
        '[[devices]]\nname="lamp"\npin="D5"\nkind="pwm_led"\n'
    )
    with pytest.raises(PinInUse, match="timer TIM3") as info:
        SerialBoard("nucleo-f401re", devices(wiring))
    message = str(info.value)
    assert "'arm' (D4, 50 Hz)" in message and "'lamp' (D5, 1000 Hz)" in message
    assert "D3 (TIM2)" in message and "A0 (TIM5)" in message  # pins that would work
    assert "D12 (TIM3)" not in message
    # Two lamps share TIM3 happily: one frequency.
    same = wiring.replace('kind="servo"', 'kind="pwm_led"')
    SerialBoard("nucleo-f401re", devices(same))


async def test_a_board_reset_behind_an_open_port_is_set_up_again() -> None:
    # The reset button, or the hardware watchdog biting: the USB port stays open, the MCU
    # forgets its devices and watchdogs. The heartbeat notices and the host sets it up again.
    options = LinkOptions(backoff_s=(0.05, 0.2), watchdog_ms=300, hardware_watchdog_ms=2000)
    async with SerialBoard("nucleo-f401re", devices(), sim=True, options=options) as board:
        virtual = board.virtual
        assert virtual.state.wdt is not None and virtual.state.modes["PA8"] == "out"
        virtual.press_reset()
        await until(lambda: virtual.hard_resets == 1)
        assert virtual.state.modes["PA8"] == "in" and virtual.state.wdt is None
        await until(lambda: virtual.state.modes.get("PA8") == "out" and virtual.state.wdt)
        assert virtual.state.outputs["PA8"] == 1  # the active-low fan set up off again
        await board.switch("fan", True)
        assert virtual.state.outputs["PA8"] == 0


async def test_a_board_left_at_the_repl_is_noticed_and_brought_back_at_safe_levels(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # The firmware loop gives up (a fault that outlasts its back-off): outputs safe, a
    # traceback, the REPL prompt. The host sees the prompt mid-session, logs it, soft-resets
    # the board and sets its devices up again -- at their safe levels, not at initial.
    wiring = '[[devices]]\nname = "green_led"\npin = "D13"\nkind = "led"\ninitial = "on"\n'
    async with SerialBoard("nucleo-f401re", devices(wiring), sim=True, options=FAST) as board:
        virtual = board.virtual
        assert virtual.state.level("PA5") == 1  # initial: on
        monkeypatch.setattr(virtual._loop_mod, "GIVE_UP_MS", 0)  # give up at the 2nd failure

        def broken(now: int) -> None:
            raise MemoryError("no heap left")

        virtual.core.tick = broken
        await until(lambda: virtual.gave_up == 1)
        await until(lambda: board.link.repl_recoveries == 1 and not board.link.restarted_from_repl)
        await until(lambda: board.connected)
        assert virtual.resets == 1  # a soft reset, not a hard one
        assert virtual.hard_resets == 0
        assert virtual.state.level("PA5") == 0  # set up safe: the LED stays off
        assert board.device("green_led").value == 0.0  # and the host says so
        assert "at the MicroPython REPL" in caplog.text and "MemoryError" in caplog.text
        health = await board.health_check()
        assert health.healthy and "brought back from the REPL 1 time" in health.detail
        # ... and `clawseed-edge status` (the service's summary line) counts it.
        from types import SimpleNamespace

        from clawseed_edge.service.process import runtime_summary

        runtime = SimpleNamespace(
            provider=SimpleNamespace(name="demo", model="x"), peripherals=[board]
        )
        assert "nucleo: nucleo-f401re with 1 device (brought back from the REPL 1x)" in (
            runtime_summary(runtime)
        )
        await board.switch("green_led", True)  # serving again
        assert virtual.state.level("PA5") == 1


@pytest.mark.parametrize(
    ("kind", "extra", "reason"),
    [
        ("rgb_led", 'pins = { green = "D5", blue = "D6" }\n', "three pwm_led devices"),
        ("distance_sensor", 'pins = { trigger = "D8" }\n', "echo pulse"),
        ("tonal_buzzer", "", "plays no notes"),
    ],
)
def test_kinds_the_firmware_cannot_carry_out_are_refused_at_load(
    kind: str, extra: str, reason: str
) -> None:
    wiring = f'[[devices]]\nname="x"\npin="D3"\nkind="{kind}"\n{extra}'
    with pytest.raises(ConfigInvalid, match=reason) as err:
        SerialBoard("nucleo-f401re", devices(wiring))
    assert "not supported on a Nucleo" in str(err.value)


async def test_a_servos_pulse_limits_hold_on_a_nucleo() -> None:
    wiring = (
        '[[devices]]\nname="arm"\npin="D9"\nkind="servo"\nmin_pulse_us=1200\nmax_pulse_us=1800\n'
    )
    async with SerialBoard("nucleo-f401re", devices(wiring), sim=True, options=FAST) as board:
        state = board.virtual.state
        pulses = {}
        for position in (-1.0, 0.0, 1.0):
            await board.set_level("arm", position)
            freq, duty_u16 = state.pwm["PC7"]
            assert freq == 50
            # Microseconds of the 20 ms period, to 10 us (the timer's tick is about 1.5 us).
            pulses[position] = round(duty_u16 / 65535 * 20_000 / 10) * 10
    # 1200 and 1800 us at the ends (not 1000 and 2000: the servo's end stops), 1500 between.
    assert pulses == {-1.0: 1200, 0.0: 1500, 1.0: 1800}


async def test_sim_input_drives_the_virtual_boards_input_line(nucleo: SerialBoard) -> None:
    # `sim press` on a Nucleo: the virtual board's pin, the firmware's edge event, the value.
    await nucleo.sim_input("button", True)
    assert nucleo.virtual.state.inputs["PC13"] == 0  # a pulled-up button: pressed is low
    await until(lambda: nucleo.device("button").value == 1.0)
    await nucleo.sim_input("button", False)
    await until(lambda: nucleo.device("button").value == 0.0)
    with pytest.raises(PinModeUnsupported, match="only inputs"):
        await nucleo.sim_input("fan", True)

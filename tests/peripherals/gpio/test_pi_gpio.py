"""PiGpio on mock pins: the same code path as on a Pi, with gpiozero's MockFactory."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from clawseed_edge.api import (
    DeviceClosed,
    DeviceNotFound,
    HardwareError,
    Lifecycle,
    Peripheral,
    PeripheralClosed,
    PinModeUnsupported,
    ResourceClosed,
    ToolArgumentsInvalid,
)
from clawseed_edge.peripherals.gpio import PiGpio, loads_hardware_toml
from clawseed_edge.testing.hardware import mock_pin, pin_level, press, release

from ..conftest import WIRING


async def test_is_a_peripheral(sim_board: Any) -> None:
    board = await sim_board(WIRING)
    assert isinstance(board, Peripheral)
    assert board.board_type == "sim" and board.sim
    health = await board.health_check()
    assert health.healthy and "6 devices" in health.detail


async def test_switch_red_led_drives_gpio17_high(sim_board: Any, mock_pin_factory: Any) -> None:
    board = await sim_board(WIRING)
    pin = mock_pin_factory.pin("GPIO17")
    assert pin.state == 0
    await board.switch("red_led", True)
    assert pin.state == 1
    await board.switch("red_led", False)
    pin.assert_states([False, True, False])


async def test_active_low_relay(sim_board: Any) -> None:
    board = await sim_board(WIRING)
    assert pin_level(board, "fan") == 1  # off = high on an active-low relay board
    await board.switch("fan", True)
    assert pin_level(board, "GPIO23") == 0
    assert await board.read("fan") == 1


async def test_pwm_level_and_cap(sim_board: Any) -> None:
    board = await sim_board(WIRING)
    await board.set_level("lamp", 0.3)
    assert pin_level(board, "lamp") == pytest.approx(0.3)
    with pytest.raises(ToolArgumentsInvalid, match=r"lamp's allowed range 0\.\.0\.5"):
        await board.set_level("lamp", 0.8)
    assert pin_level(board, "lamp") == pytest.approx(0.3)  # unchanged
    await board.switch("lamp", True)  # "on" means the cap
    assert pin_level(board, "lamp") == pytest.approx(0.5)


async def test_servo_range(sim_board: Any) -> None:
    board = await sim_board(WIRING)
    await board.set_level("arm", -0.8)
    assert board.pin_states()["GPIO12"]["value"] == pytest.approx(-0.8)
    with pytest.raises(ToolArgumentsInvalid, match=r"-0\.8\.\.0\.8"):
        await board.set_level("arm", 1.0)


async def test_wrong_kind_and_unknown_device(sim_board: Any) -> None:
    board = await sim_board(WIRING)
    with pytest.raises(PinModeUnsupported, match="input"):
        await board.switch("doorbell", True)
    with pytest.raises(PinModeUnsupported, match="gpio_switch"):
        await board.set_level("red_led", 0.5)
    with pytest.raises(DeviceNotFound, match="configured devices: red_led, lamp"):
        await board.switch("blue_led", True)


async def test_the_peripheral_does_not_count_switches(mock_pin_factory: Any) -> None:
    # The SecurityPolicy owns the switch limit; the board switches as often as it is told.
    board = PiGpio(loads_hardware_toml(WIRING), pin_factory=mock_pin_factory)
    async with board:
        for i in range(8):
            await board.switch("fan", i % 2 == 0)
        assert board.pin_states()["GPIO23"]["value"] == 0


async def test_safe_state_on_apply_and_disconnect(mock_pin_factory: Any) -> None:
    board = PiGpio(loads_hardware_toml(WIRING), pin_factory=mock_pin_factory)
    await board.connect()
    assert pin_level(board, "pump") == 1  # initial defaults to safe ("on")
    await board.switch("red_led", True)
    await board.switch("fan", True)
    await board.set_level("lamp", 0.4)
    await board.set_level("arm", 0.5)
    await board.switch("pump", False)

    await board.apply_safe_state()  # what estop does
    states = board.pin_states()
    assert states["GPIO17"]["level"] == 0
    assert states["GPIO23"]["level"] == 1  # active-low relay off
    assert states["GPIO18"]["level"] == 0
    assert states["GPIO12"]["value"] is None  # servo detached
    assert states["GPIO24"]["level"] == 1  # pump's safe value is "on"

    await board.switch("red_led", True)
    await board.switch("pump", False)
    await board.disconnect()
    red = mock_pin_factory.pin("GPIO17")
    assert [s.state for s in red.states][-2:] == [True, False]  # driven off before release
    pump = mock_pin_factory.pin("GPIO24")
    # initial "on", switched off, safe "on" applied before the release
    assert [bool(s.state) for s in pump.states][1:4] == [True, False, True]
    assert red.function == "input"  # released
    await board.disconnect()  # idempotent
    # A closed peripheral refuses work with its own leaf (also a ResourceClosed).
    with pytest.raises(PeripheralClosed, match="'pi' is closed; make a new PiGpio"):
        await board.switch("red_led", True)
    with pytest.raises(ResourceClosed, match="make a new PiGpio"):
        await board.connect()
    assert board.state is Lifecycle.CLOSED


async def test_button_edge_produces_event(sim_board: Any) -> None:
    board = await sim_board(WIRING)
    seen: list[Any] = []
    board.add_listener(seen.append)
    async with board.events() as stream:
        press(board, "doorbell")
        event = await asyncio.wait_for(stream.__anext__(), 2)
        assert (event.device, event.value, event.pin) == ("doorbell", 1, "GPIO27")
        release(board, "doorbell")
        event = await asyncio.wait_for(stream.__anext__(), 2)
        assert event.value == 0 and not event.active
    assert [e.value for e in seen] == [1, 0]
    assert await board.read("doorbell") == 0


async def test_edge_from_another_thread_reaches_the_loop(sim_board: Any) -> None:
    board = await sim_board(WIRING)
    stream = board.events()
    pin = mock_pin(board, "doorbell")
    thread = threading.Thread(target=pin.drive_low)  # gpiozero calls back on that thread
    thread.start()
    thread.join()
    event = await asyncio.wait_for(stream.__anext__(), 2)
    assert event.device == "doorbell" and event.value == 1
    await stream.aclose()
    release(board, "doorbell")  # a held Button makes gpiozero's hold thread wait 1 s at close


async def test_events_end_at_disconnect(mock_pin_factory: Any) -> None:
    board = PiGpio(loads_hardware_toml(WIRING), pin_factory=mock_pin_factory)
    await board.connect()
    stream = board.events()
    await board.disconnect()
    assert [e async for e in stream] == []


async def test_blink_runs_in_background_and_ends_off(sim_board: Any) -> None:
    board = await sim_board(WIRING)
    await board.blink("red_led", 3, 20, 20)
    task = board.blinking("red_led")
    assert task is not None and not task.done()  # returned before blinking finished
    await asyncio.wait_for(task, 5)
    pin = mock_pin(board, "red_led")
    assert [s.state for s in pin.states] == [False, True, False, True, False, True, False]


async def test_switch_stops_blink(sim_board: Any) -> None:
    board = await sim_board(WIRING)
    await board.blink("red_led", 20, 1000, 1000)
    task = board.blinking("red_led")
    await board.switch("red_led", True)
    assert task is not None
    with pytest.raises(asyncio.CancelledError):
        await task
    assert pin_level(board, "red_led") == 1


async def test_blink_bounds(sim_board: Any) -> None:
    board = await sim_board(WIRING)
    with pytest.raises(ToolArgumentsInvalid, match="count 50"):
        await board.blink("red_led", 50, 100, 100)
    with pytest.raises(PinModeUnsupported, match="relay"):
        await board.blink("fan", 1, 100, 100)


async def test_pin_states_describe_every_device(sim_board: Any) -> None:
    board = await sim_board(WIRING)
    states = board.pin_states()
    assert set(states) == {"GPIO17", "GPIO18", "GPIO23", "GPIO27", "GPIO12", "GPIO24"}
    assert states["GPIO17"] == {
        "pin": "GPIO17",
        "device": "red_led",
        "kind": "led",
        "mode": "output",
        "value": 0.0,
        "level": 0.0,
        "frequency": None,
    }
    assert states["GPIO27"]["mode"] == "input"
    status = await board.status()
    assert [s["device"] for s in status] == ["red_led", "lamp", "fan", "doorbell", "arm", "pump"]


async def test_describe_for_the_prompt(sim_board: Any) -> None:
    board = await sim_board(WIRING)
    text = board.describe()
    assert "Board: Simulated Pi" in text
    assert "- red_led: led on GPIO17, header 11" in text
    assert "fan: relay on GPIO23" in text and "asks the user first" in text
    assert "level 0..0.5" in text
    assert "led1=GPIO17" in text


async def test_rpi_board_in_simulation(mock_pin_factory: Any) -> None:
    hw = loads_hardware_toml('[hardware]\nboard = "rpi4b"\n' + WIRING)
    board = PiGpio(hw, sim=True, pin_factory=mock_pin_factory)
    async with board:
        await board.switch("red_led", True)
        assert mock_pin_factory.pin("GPIO17").state == 1
    assert "Raspberry Pi 4" in board.describe()


def test_mcu_board_refused() -> None:
    hw = loads_hardware_toml('[hardware]\nboard = "nucleo-f401re"\n')
    with pytest.raises(HardwareError, match="microcontroller"):
        PiGpio(hw)


async def test_pin_claimed_elsewhere_is_translated(mock_pin_factory: Any) -> None:
    from gpiozero import LED

    squatter = LED("GPIO17", pin_factory=mock_pin_factory)
    board = PiGpio(loads_hardware_toml(WIRING), pin_factory=mock_pin_factory)
    try:
        with pytest.raises(HardwareError, match=r"red_led.*GPIO17.*in use"):
            await board.connect()
        # Devices opened before the failure were closed again: GPIO18 is free.
        LED("GPIO18", pin_factory=mock_pin_factory).close()
    finally:
        squatter.close()


async def test_slow_consumer_drops_oldest_and_still_ends(mock_pin_factory: Any) -> None:
    board = PiGpio(loads_hardware_toml(WIRING), pin_factory=mock_pin_factory)
    await board.connect()
    stream = board.events()
    for _ in range(200):  # 400 edges into a 256-event queue
        press(board, "doorbell")
        release(board, "doorbell")
    await asyncio.sleep(0)  # let the loop run the handed-over callbacks
    await board.disconnect()
    events = [e async for e in stream]
    assert board.events_dropped == 400 - 256 + 1  # and one more for the end marker
    assert len(events) == 255 and events[-1].value == 0


class GatedFactory:
    """Wraps a MockFactory; claiming ``gated_pin`` waits until the test opens the gate.

    It lets a test cancel ``connect`` while the worker is in the middle of creating devices.
    """

    def __init__(self, factory: Any, gated_pin: str) -> None:
        self._factory = factory
        self._gated = gated_pin
        self.reached = threading.Event()
        self.gate = threading.Event()

    def pin(self, spec: Any) -> Any:
        if str(spec) == self._gated:
            self.reached.set()
            assert self.gate.wait(5), "the test never opened the gate"
        return self._factory.pin(spec)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._factory, name)


async def test_cancelled_connect_releases_the_pins_for_a_fresh_connect(
    mock_pin_factory: Any,
) -> None:
    wiring = loads_hardware_toml(WIRING)
    gated = GatedFactory(mock_pin_factory, "GPIO23")  # fan: the third device, two are made
    first = PiGpio(wiring, pin_factory=gated)
    task = asyncio.create_task(first.connect())
    reached = await asyncio.to_thread(gated.reached.wait, 5)
    assert reached  # the worker is inside the device creation now
    task.cancel()
    for _ in range(5):  # let the cancellation reach connect's cleanup
        await asyncio.sleep(0)
    gated.gate.set()  # the creation finishes on the worker; the release is queued behind it
    with pytest.raises(asyncio.CancelledError):
        await task
    assert first.state is Lifecycle.UNOPENED  # nothing claimed: it may be retried
    assert mock_pin_factory.pin("GPIO17").function == "input"  # red_led released again

    second = PiGpio(wiring, pin_factory=mock_pin_factory)
    async with second:  # claims the same pins: no PinInUse
        await second.switch("red_led", True)
        assert mock_pin_factory.pin("GPIO17").state == 1
        await second.switch("fan", True)


async def test_failed_connect_releases_what_it_claimed(mock_pin_factory: Any) -> None:
    import gpiozero

    wiring = loads_hardware_toml(WIRING)
    taken = gpiozero.DigitalOutputDevice("GPIO23", pin_factory=mock_pin_factory)  # fan's pin
    board = PiGpio(wiring, pin_factory=mock_pin_factory)
    with pytest.raises(HardwareError, match="fan"):
        await board.connect()
    assert mock_pin_factory.pin("GPIO17").function == "input"  # red_led was released
    taken.close()
    async with PiGpio(wiring, pin_factory=mock_pin_factory) as again:
        await again.switch("red_led", True)


async def test_a_closed_device_refuses_work_with_its_own_leaf(mock_pin_factory: Any) -> None:
    board = PiGpio(loads_hardware_toml(WIRING), pin_factory=mock_pin_factory)
    async with board:
        dev = board.device("red_led")
    with pytest.raises(DeviceClosed, match="'red_led' is closed") as info:
        dev.write(1.0)  # a handle kept past disconnect
    assert isinstance(info.value, ResourceClosed) and info.value.code == "device_closed"
    with pytest.raises(DeviceClosed):
        dev.read()


def test_the_kind_literal_and_the_kind_table_agree() -> None:
    from typing import get_args

    from clawseed_edge.peripherals.wired.config import DeviceKind
    from clawseed_edge.peripherals.wired.kinds import KIND_SPECS

    assert list(get_args(DeviceKind)) == list(KIND_SPECS)


async def test_input_events_carry_the_injected_wall_clock(mock_pin_factory: Any) -> None:
    board = PiGpio(
        loads_hardware_toml(WIRING), pin_factory=mock_pin_factory, wall_clock=lambda: 1234.5
    )
    async with board, board.events() as stream:
        press(board, "doorbell")
        event = await asyncio.wait_for(stream.__anext__(), 2)
    assert (event.device, event.at) == ("doorbell", 1234.5)


async def test_disconnect_while_connecting_wins(mock_pin_factory: Any) -> None:
    gated = GatedFactory(mock_pin_factory, "GPIO23")
    board = PiGpio(loads_hardware_toml(WIRING), pin_factory=gated)
    task = asyncio.create_task(board.connect())
    assert await asyncio.to_thread(gated.reached.wait, 5)
    await board.disconnect()  # before the devices exist: nothing to release yet
    gated.gate.set()
    with pytest.raises(PeripheralClosed, match="disconnected while connecting"):
        await task
    assert board.state is Lifecycle.CLOSED
    assert mock_pin_factory.pin("GPIO17").function == "input"  # released, not left claimed

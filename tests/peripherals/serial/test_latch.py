"""A Nucleo that resets or is replugged while the emergency stop is latched comes back with
every output at its safe level: its pin history never passes through ``initial``."""

from __future__ import annotations

from clawseed_edge.api import EstopLatch
from clawseed_edge.peripherals.gpio import loads_hardware_toml
from clawseed_edge.peripherals.safety import connect_peripheral
from clawseed_edge.peripherals.serial.board import SerialBoard
from clawseed_edge.peripherals.serial.link import LinkOptions
from clawseed_edge.peripherals.serial.sim_machine import PinChange

from .test_board import ESTOP_WIRING, until

RESETTING = LinkOptions(backoff_s=(0.05, 0.2), watchdog_ms=300, hardware_watchdog_ms=2000)


def board() -> SerialBoard:
    # A relay ("door", PA8) and a lamp, both with initial = "on".
    devices = loads_hardware_toml(ESTOP_WIRING).devices
    return SerialBoard("nucleo-f401re", devices, sim=True, options=RESETTING)


async def test_a_reset_behind_an_open_port_after_an_estop_never_passes_through_initial() -> None:
    latch = EstopLatch()
    nucleo = board()
    await connect_peripheral(nucleo, latch)
    try:
        virtual = nucleo.virtual
        assert virtual.state.outputs["PA8"] == 1  # not latched yet: the relay started at initial
        latch.engage("estop in a test")
        await nucleo.apply_safe_state()
        assert virtual.state.outputs["PA8"] == 0
        changes: list[PinChange] = []
        virtual.state.listeners.append(changes.append)
        before = len(virtual.state.history)
        virtual.press_reset()
        await until(lambda: virtual.hard_resets == 1)
        await until(lambda: virtual.state.modes.get("PA8") == "out" and virtual.state.wdt)
        after = virtual.state.history[before:]
        assert ("PA8", 0) in after  # set up again ...
        assert all(level == 0 for _, level in after)  # ... and only ever at its safe level
        assert not any(c.level or c.freq for c in changes)  # the lamp never lit either
    finally:
        await nucleo.disconnect()


async def test_a_replug_while_latched_and_a_connect_while_latched_start_safe() -> None:
    latch = EstopLatch()
    latch.engage("stored latch from before the restart")
    nucleo = board()
    await connect_peripheral(nucleo, latch)  # a service restart: never at initial
    try:
        virtual = nucleo.virtual
        assert virtual.state.history and all(level == 0 for _, level in virtual.state.history)
        before = len(virtual.state.history)
        virtual.unplug()
        await until(lambda: not nucleo.connected)
        virtual.replug()
        # ``connected`` turns true when the port opens, before the handshake and the set-up:
        # wait for the relay's set-up itself (a loaded machine can be between the two).
        await until(lambda: nucleo.connected and ("PA8", 0) in virtual.state.history[before:])
        after = virtual.state.history[before:]
        assert all(level == 0 for _, level in after)
        # Once a person resets, nothing switches; the next setup is the config's again.
        latch.release("a person in a test")
        assert virtual.state.outputs["PA8"] == 0
    finally:
        await nucleo.disconnect()

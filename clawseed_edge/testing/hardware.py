"""Helpers for hardware-in-the-loop tests of your own wiring, on gpiozero mock pins.

::

    from clawseed_edge.testing.hardware import wired_sim_board, pin_level, press

    board = wired_sim_board('''
    [[devices]]
    name = "red_led"
    pin = "GPIO17"
    kind = "led"
    ''')
    await board.connect()
    await board.switch("red_led", True)
    assert pin_level(board, "GPIO17") == 1

The pytest fixtures ``mock_pin_factory`` and ``sim_board`` (in
:mod:`clawseed_edge.testing.hardware_fixtures`, loaded by the pytest plugin) wrap these.
"""

from __future__ import annotations

from typing import Any

from clawseed_edge.peripherals.boards import default_registry
from clawseed_edge.peripherals.gpio import PiGpio, loads_hardware_toml, mock_pin_factory

__all__ = [
    "mock_pin",
    "mock_pin_factory",
    "pin_level",
    "pin_state",
    "press",
    "release",
    "wired_sim_board",
]


def wired_sim_board(devices_toml: str, *, pin_factory: Any = None, name: str = "pi") -> PiGpio:
    """A :class:`PiGpio` (not yet connected) wired as ``devices_toml`` says, on mock pins.

    ``devices_toml`` holds ``[[devices]]`` tables and optionally ``[hardware]`` (``board``
    defaults to ``sim``; any Pi board id works, its pins are then checked). ``pin_factory``
    defaults to a fresh MockFactory with PWM pins, which the board owns and closes.

    Raises:
        ConfigInvalid, PinInvalid, PinReserved, PinInUse, PinModeUnsupported: bad wiring.
    """
    hardware = loads_hardware_toml(devices_toml, "<devices_toml>")
    board = default_registry().get(hardware.board)
    return PiGpio(
        hardware,
        board=board,
        name=name,
        sim=True,
        pin_factory=pin_factory,
        source="<devices_toml>",
    )


def mock_pin(board: PiGpio, device_or_pin: str) -> Any:
    """The gpiozero ``MockPin`` behind a device name or a pin name (``red_led``, ``GPIO17``).

    Use it for ``drive_high()`` / ``drive_low()`` on inputs, ``states`` and
    ``assert_states([...])`` on outputs. The board must be connected.
    """
    factory = board.pin_factory
    if factory is None:
        raise RuntimeError("the board is not connected: await board.connect() first")
    names = {d.name: d.pin_name for d in board.devices()}
    pin = names.get(device_or_pin) or board.board.lookup(device_or_pin).name
    return factory.pin(pin)


def pin_level(board: PiGpio, device_or_pin: str) -> float:
    """The physical level of a mock pin: 0/1 for digital pins, the duty cycle for PWM."""
    return float(mock_pin(board, device_or_pin).state)


def pin_state(board: PiGpio, device_or_pin: str) -> dict[str, Any]:
    """The state of one configured pin: ``pin``, ``device``, ``kind``, ``mode``, ``value``,
    ``level``, ``frequency`` (see :meth:`PiGpio.pin_states`)."""
    names = {d.name: d.pin_name for d in board.devices()}
    pin = names.get(device_or_pin) or board.board.lookup(device_or_pin).name
    states = board.pin_states()
    if pin not in states:
        raise KeyError(f"{device_or_pin!r} is not a configured device or pin")
    return states[pin]


def press(board: PiGpio, device: str) -> None:
    """Drive an input device's pin to its active level (a button: pressed)."""
    _drive(board, device, active=True)


def release(board: PiGpio, device: str) -> None:
    """Drive an input device's pin to its inactive level (a button: released)."""
    _drive(board, device, active=False)


def _drive(board: PiGpio, device: str, *, active: bool) -> None:
    dev = board.device(device)
    gz = dev.gpiozero_device
    if gz is None or dev.is_output:
        raise RuntimeError(f"{device} is not a connected input device")
    high = active != dev.wired.config.active_low
    pin = mock_pin(board, device)
    pin.drive_high() if high else pin.drive_low()

"""Peripherals: boards, Pi GPIO through gpiozero, simulation. Depends on api only.

gpiozero itself is imported lazily (when a pin factory or a device is made), so importing this
package costs msgspec and the board files, not the GPIO stack.
"""

from .boards import BoardRegistry, BoardSpec, PinSpec, ReservedPin, default_registry
from .gpio import (
    DeviceConfig,
    EventMessage,
    EventStream,
    HardwareConfig,
    InputEvent,
    InputRules,
    PiGpio,
    WiredDevice,
    load_hardware_toml,
    loads_hardware_toml,
    make_pin_factory,
    mock_pin_factory,
    parse_hardware,
    validate_devices,
)
from .safety import apply_safe_state_all, install_signal_handlers

__all__ = [
    "BoardRegistry",
    "BoardSpec",
    "DeviceConfig",
    "EventMessage",
    "EventStream",
    "HardwareConfig",
    "InputEvent",
    "InputRules",
    "PiGpio",
    "PinSpec",
    "ReservedPin",
    "WiredDevice",
    "apply_safe_state_all",
    "default_registry",
    "install_signal_handlers",
    "load_hardware_toml",
    "loads_hardware_toml",
    "make_pin_factory",
    "mock_pin_factory",
    "parse_hardware",
    "validate_devices",
]

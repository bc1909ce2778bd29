"""Peripherals: boards, Pi GPIO through gpiozero, simulation. Depends on api only.

One subpackage per way of reaching hardware (``gpio/`` today), the board data (``boards``), the
blocking worker every bus runs its calls on (``worker``), the factory registry behind
``[[peripherals]]`` tables (``registry``) and the safe state on every way out (``safety``).

gpiozero itself is imported lazily (when a pin factory or a device is made), so importing this
package costs msgspec and the board files, not the GPIO stack.
"""

from .boards import BoardRegistry, BoardSpec, PinSpec, ReservedPin, default_registry
from .gpio import (
    KIND_SPECS,
    DeviceConfig,
    EventMessage,
    EventStream,
    GpioPort,
    HardwareConfig,
    InputEvent,
    InputRules,
    KindSpec,
    PiGpio,
    WiredDevice,
    load_hardware_toml,
    loads_hardware_toml,
    make_pin_factory,
    mock_pin_factory,
    parse_hardware,
    share_gpio_tools,
    validate_devices,
)
from .registry import PeripheralFactory, PeripheralFactoryRegistry, PeripheralTable
from .safety import apply_safe_state_all, install_signal_handlers
from .worker import BlockingWorker

__all__ = [
    "KIND_SPECS",
    "BlockingWorker",
    "BoardRegistry",
    "BoardSpec",
    "DeviceConfig",
    "EventMessage",
    "EventStream",
    "GpioPort",
    "HardwareConfig",
    "InputEvent",
    "InputRules",
    "KindSpec",
    "PeripheralFactory",
    "PeripheralFactoryRegistry",
    "PeripheralTable",
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
    "share_gpio_tools",
    "validate_devices",
]

"""Peripherals: boards, wired devices, sensors, simulation. Depends on api only.

One wired-device model shared by every backend (``wired/``: config, kinds, values, input events,
the gpio_* tools), one subpackage per way of reaching hardware (``gpio/`` the Pi header through
gpiozero, ``serial/`` a Nucleo through its firmware, ``i2c/`` and ``sysfs/`` sensors below the
driver base ``sensor_driver``, ``sensors/`` the sensor bank), the board data (``boards``), the
blocking worker every bus runs its calls on (``worker``), the factory registry behind
``[[peripherals]]`` tables (``registry``) and the safe state on every way out (``safety``).

gpiozero itself is imported lazily (when a pin factory or a device is made), so importing this
package costs msgspec and the board files, not the GPIO stack.
"""

from .boards import BoardRegistry, BoardSpec, PinSpec, ReservedPin, default_registry
from .gpio import (
    HardwareConfig,
    PiGpio,
    load_hardware_toml,
    loads_hardware_toml,
    make_pin_factory,
    mock_pin_factory,
    parse_hardware,
)
from .registry import PeripheralFactory, PeripheralFactoryRegistry, PeripheralTable
from .safety import apply_safe_state_all, install_signal_handlers
from .wired import (
    KIND_SPECS,
    DeviceConfig,
    EventMessage,
    EventStream,
    GpioPort,
    InputEvent,
    InputRules,
    KindSpec,
    PinDevice,
    WiredBoard,
    WiredDevice,
    Wiring,
    share_gpio_tools,
    validate_devices,
)
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
    "PinDevice",
    "PinSpec",
    "ReservedPin",
    "WiredBoard",
    "WiredDevice",
    "Wiring",
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

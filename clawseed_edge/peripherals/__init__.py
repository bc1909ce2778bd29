"""Peripherals: boards, wired devices, sensors, simulation. Depends on api only.

One wired-device model shared by every backend (``wired/``: config, kinds, values, input events,
the gpio_* tools), one subpackage per way of reaching hardware (``gpio/`` the Pi header through
gpiozero, ``serial/`` a Nucleo through its firmware, ``i2c/`` and ``sysfs/`` sensors below the
driver base ``sensor_driver``, ``sensors/`` the sensor bank), the board data (``boards``), the
blocking worker every bus runs its calls on (``worker``), the factory registry behind
``[[peripherals]]`` tables (``registry``) and the safe state on every way out (``safety``).

gpiozero itself is imported lazily (when a pin factory or a device is made), so importing this
package costs msgspec and the board files, not the GPIO stack.

Importing the package loads nothing but this file: each name below is imported from its module
on first use, so a process loads only the parts its configuration uses (a Pi header with an LED
never loads the sensor bank, the Nucleo driver or the ``[[peripherals]]`` factories).
"""

import typing

from clawseed_edge.api.lazy import lazy_face as _lazy_face

if typing.TYPE_CHECKING:
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

_LAZY = {
    "BoardRegistry": ".boards",
    "BoardSpec": ".boards",
    "PinSpec": ".boards",
    "ReservedPin": ".boards",
    "default_registry": ".boards",
    "HardwareConfig": ".gpio.config",
    "load_hardware_toml": ".gpio.config",
    "loads_hardware_toml": ".gpio.config",
    "parse_hardware": ".gpio.config",
    "PiGpio": ".gpio.pi_gpio",
    "make_pin_factory": ".gpio.pins",
    "mock_pin_factory": ".gpio.pins",
    "PeripheralFactory": ".registry",
    "PeripheralFactoryRegistry": ".registry",
    "PeripheralTable": ".registry",
    "apply_safe_state_all": ".safety",
    "install_signal_handlers": ".safety",
    "KIND_SPECS": ".wired.kinds",
    "KindSpec": ".wired.kinds",
    "DeviceConfig": ".wired.config",
    "WiredDevice": ".wired.config",
    "Wiring": ".wired.config",
    "validate_devices": ".wired.config",
    "EventMessage": ".wired.inputs",
    "EventStream": ".wired.inputs",
    "InputEvent": ".wired.inputs",
    "InputRules": ".wired.inputs",
    "GpioPort": ".wired.port",
    "PinDevice": ".wired.device",
    "WiredBoard": ".wired.board",
    "share_gpio_tools": ".wired.toolset",
    "BlockingWorker": ".worker",
}


__getattr__, __dir__ = _lazy_face(__name__, _LAZY, __all__)

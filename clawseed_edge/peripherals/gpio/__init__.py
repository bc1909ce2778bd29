"""The Pi header through gpiozero: devices on pins, their tools, input events, pin factories.

Simulated pins are gpiozero's MockFactory (:func:`mock_pin_factory`); the same code runs on them
and on lgpio.
"""

from .config import (
    INPUT_KINDS,
    KINDS,
    OUTPUT_KINDS,
    DeviceConfig,
    HardwareConfig,
    WiredDevice,
    load_hardware_toml,
    loads_hardware_toml,
    parse_hardware,
    validate_devices,
)
from .devices import GpioDevice
from .inputs import EventMessage, EventStream, InputEvent, InputRules
from .kinds import BLINK_LIMITS, KIND_SPECS, KindSpec
from .pi_gpio import PiGpio
from .pins import PinFactoryKind, make_pin_factory, mock_pin_factory
from .port import GpioDeviceView, GpioPort
from .toolset import HardwareStatus, build_tools, share_gpio_tools

__all__ = [
    "BLINK_LIMITS",
    "INPUT_KINDS",
    "KINDS",
    "KIND_SPECS",
    "OUTPUT_KINDS",
    "DeviceConfig",
    "EventMessage",
    "EventStream",
    "GpioDevice",
    "GpioDeviceView",
    "GpioPort",
    "HardwareConfig",
    "HardwareStatus",
    "InputEvent",
    "InputRules",
    "KindSpec",
    "PiGpio",
    "PinFactoryKind",
    "WiredDevice",
    "build_tools",
    "load_hardware_toml",
    "loads_hardware_toml",
    "make_pin_factory",
    "mock_pin_factory",
    "parse_hardware",
    "share_gpio_tools",
    "validate_devices",
]

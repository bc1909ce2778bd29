"""One device model for every board: config, kinds, values, input events and the gpio_* tools.

A backend differs only in how a level reaches a pin (gpiozero's pin-factory idea): ``gpio/``
drives the Pi header through gpiozero, ``serial/`` a Nucleo through its firmware. Both build on
:class:`WiredBoard` (the peripheral) and :class:`PinDevice` (one device), so the same
``[[devices]]`` table, checks, tools, blinking, events and safe values hold on either.
"""

from .board import WiredBoard
from .config import (
    INPUT_KINDS,
    KINDS,
    OUTPUT_KINDS,
    DeviceConfig,
    WiredDevice,
    Wiring,
    validate_devices,
)
from .device import PinDevice
from .inputs import EventMessage, EventStream, InputEvent, InputRules
from .kinds import BLINK_LIMITS, KIND_SPECS, KindSpec
from .port import GpioDeviceView, GpioPort
from .toolset import HardwareStatus, build_tools, share_gpio_tools, share_readings

__all__ = [
    "BLINK_LIMITS",
    "INPUT_KINDS",
    "KINDS",
    "KIND_SPECS",
    "OUTPUT_KINDS",
    "DeviceConfig",
    "EventMessage",
    "EventStream",
    "GpioDeviceView",
    "GpioPort",
    "HardwareStatus",
    "InputEvent",
    "InputRules",
    "KindSpec",
    "PinDevice",
    "WiredBoard",
    "WiredDevice",
    "Wiring",
    "build_tools",
    "share_gpio_tools",
    "share_readings",
    "validate_devices",
]

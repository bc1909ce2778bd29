"""One device model for every board: config, kinds, values, input events and the gpio_* tools.

A backend differs only in how a level reaches a pin (gpiozero's pin-factory idea): ``gpio/``
drives the Pi header through gpiozero, ``serial/`` a Nucleo through its firmware. Both build on
:class:`WiredBoard` (the peripheral) and :class:`PinDevice` (one device), so the same
``[[devices]]`` table, checks, tools, blinking, events and safe values hold on either.

The names below are imported from their modules on first use: the config's types cost their
own module, not the board, its tools and its events.
"""

import typing

from clawseed_edge.api.lazy import lazy_face as _lazy_face

if typing.TYPE_CHECKING:
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

_LAZY = {
    "WiredBoard": ".board",
    "INPUT_KINDS": ".config",
    "KINDS": ".config",
    "OUTPUT_KINDS": ".config",
    "DeviceConfig": ".config",
    "WiredDevice": ".config",
    "Wiring": ".config",
    "validate_devices": ".config",
    "PinDevice": ".device",
    "EventMessage": ".inputs",
    "EventStream": ".inputs",
    "InputEvent": ".inputs",
    "InputRules": ".inputs",
    "BLINK_LIMITS": ".kinds",
    "KIND_SPECS": ".kinds",
    "KindSpec": ".kinds",
    "GpioDeviceView": ".port",
    "GpioPort": ".port",
    "HardwareStatus": ".toolset",
    "build_tools": ".toolset",
    "share_gpio_tools": ".toolset",
    "share_readings": ".toolset",
}


__getattr__, __dir__ = _lazy_face(__name__, _LAZY, __all__)

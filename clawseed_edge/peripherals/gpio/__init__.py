"""The Pi header through gpiozero: a backend of the shared wired-device model (``wired/``).

:class:`PiGpio` is a :class:`~..wired.WiredBoard` whose values reach the pins through gpiozero
devices on a pin factory; simulated pins are gpiozero's MockFactory (:func:`mock_pin_factory`),
and the same code runs on them and on lgpio. The Pi header's own config is ``[hardware]`` +
``[[devices]]`` (:class:`HardwareConfig`, :func:`load_hardware_toml`).

The names below are imported from their modules on first use: reading ``[hardware]`` costs
the config module, not the peripheral.
"""

import typing

from clawseed_edge.api.lazy import lazy_face as _lazy_face

if typing.TYPE_CHECKING:
    from .config import HardwareConfig, load_hardware_toml, loads_hardware_toml, parse_hardware
    from .devices import GpioDevice
    from .pi_gpio import PiGpio
    from .pins import PinFactoryKind, make_pin_factory, mock_pin_factory

__all__ = [
    "GpioDevice",
    "HardwareConfig",
    "PiGpio",
    "PinFactoryKind",
    "load_hardware_toml",
    "loads_hardware_toml",
    "make_pin_factory",
    "mock_pin_factory",
    "parse_hardware",
]

_LAZY = {
    "HardwareConfig": ".config",
    "load_hardware_toml": ".config",
    "loads_hardware_toml": ".config",
    "parse_hardware": ".config",
    "GpioDevice": ".devices",
    "PiGpio": ".pi_gpio",
    "PinFactoryKind": ".pins",
    "make_pin_factory": ".pins",
    "mock_pin_factory": ".pins",
}


__getattr__, __dir__ = _lazy_face(__name__, _LAZY, __all__)

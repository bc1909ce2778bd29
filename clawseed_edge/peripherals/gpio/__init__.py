"""The Pi header through gpiozero: a backend of the shared wired-device model (``wired/``).

:class:`PiGpio` is a :class:`~..wired.WiredBoard` whose values reach the pins through gpiozero
devices on a pin factory; simulated pins are gpiozero's MockFactory (:func:`mock_pin_factory`),
and the same code runs on them and on lgpio. The Pi header's own config is ``[hardware]`` +
``[[devices]]`` (:class:`HardwareConfig`, :func:`load_hardware_toml`).
"""

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

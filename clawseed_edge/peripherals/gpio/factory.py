"""The ``pi_gpio`` peripheral type: a Pi header described by a ``[[peripherals]]`` table.

::

    [[peripherals]]
    name = "bench"          # the peripheral's name (unique in the config)
    type = "pi_gpio"
    board = "sim"           # a Pi board id (rpi4b ...), or "sim" for simulated pins
    pin_factory = "auto"    # auto | lgpio | mock

    [[peripherals.devices]] # the same keys as a top-level [[devices]] table
    name = "bench_led"
    pin = "GPIO17"
    kind = "led"

The legacy ``[hardware]`` + ``[[devices]]`` tables describe one such header named ``pi``.
"""

from __future__ import annotations

from typing import Literal

from clawseed_edge.api import Peripheral

from ..wired.factory import WiredBoardFactory, WiredSettings
from .config import HardwareConfig
from .pi_gpio import PiGpio

__all__ = ["PI_GPIO", "PiGpioFactory", "PiGpioSettings"]


class PiGpioSettings(WiredSettings, forbid_unknown_fields=True, kw_only=True, frozen=True):
    """A ``[[peripherals]]`` table of type ``pi_gpio``.

    Attributes:
        name: The peripheral's name (letters, digits, ``_``), unique in the config.
        type: Always ``pi_gpio``.
        board: A Pi board id from the registry, or ``sim``; required (nothing is guessed).
        pin_factory: ``auto`` (lgpio on hardware, mock with ``--sim``), ``lgpio`` or ``mock``.
        devices: The wiring, ``[[peripherals.devices]]`` tables.
    """

    type: Literal["pi_gpio"]
    pin_factory: Literal["auto", "lgpio", "mock"] = "auto"

    def hardware(self) -> HardwareConfig:
        return HardwareConfig(board=self.board, pin_factory=self.pin_factory, devices=self.devices)


class PiGpioFactory(WiredBoardFactory):
    """Builds a :class:`PiGpio` from a :class:`PiGpioSettings` table; ``sim`` forces mock pins."""

    settings = PiGpioSettings

    def build(
        self, settings: PiGpioSettings, *, sim: bool, source: str, devices_key: str
    ) -> Peripheral:
        return PiGpio(
            settings.hardware(),
            name=settings.name,
            sim=True if sim else None,
            source=source,
            devices_key=devices_key,
        )


#: The factory of the built-in ``pi_gpio`` type (``registry.default_registry`` loads it by name).
PI_GPIO = PiGpioFactory()

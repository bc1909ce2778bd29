"""What the ``[[peripherals]]`` table of every wired board shares, and its factory's half.

A wired board's table is a name, a ``type``, a board id and ``[[peripherals.devices]]`` (the
same keys on a Pi header and on a Nucleo); a backend's settings Struct adds its own keys (a pin
factory, a serial port) and its factory only says how to build the board from them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from clawseed_edge.api import Peripheral

from .config import DeviceConfig

__all__ = ["WiredBoardFactory", "WiredSettings"]


class WiredSettings(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, frozen=True):
    """The keys every wired board's ``[[peripherals]]`` table has.

    Attributes:
        name: The peripheral's name (letters, digits, ``_``), unique in the config.
        board: A board id from the registry; required (nothing is guessed).
        devices: The wiring, ``[[peripherals.devices]]`` tables.
    """

    name: str
    board: str
    devices: tuple[DeviceConfig, ...] = ()


class WiredBoardFactory:
    """A :class:`~clawseed_edge.peripherals.registry.PeripheralFactory` for a wired board.

    A subclass sets ``settings`` (its :class:`WiredSettings` Struct) and implements
    :meth:`build`; it may refuse a value of its own keys in :meth:`check`.
    """

    settings: type[WiredSettings] = WiredSettings

    def create(self, settings: Any, *, sim: bool = False, source: str, key: str) -> Peripheral:
        """An unconnected board; ``sim`` simulates what it drives (mock pins, a virtual board).

        Raises:
            BoardNotFound, HardwareError, ConfigInvalid, PinInvalid, PinReserved, PinInUse,
            PinModeUnsupported: Bad board, settings or wiring; messages name ``source`` and
            the key under ``key``.
        """
        self.check(settings, source=source, key=key)
        return self.build(settings, sim=sim, source=source, devices_key=f"{key}.devices")

    def check(self, settings: Any, *, source: str, key: str) -> None:
        """Refuse a value of the backend's own keys (ConfigInvalid naming ``key``)."""

    def build(self, settings: Any, *, sim: bool, source: str, devices_key: str) -> Peripheral:
        raise NotImplementedError

    def devices(self, settings: Any) -> Sequence[str]:
        """The device names the table declares (checked for uniqueness at load)."""
        return [d.name for d in settings.devices]

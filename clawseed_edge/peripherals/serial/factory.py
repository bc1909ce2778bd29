"""The ``nucleo`` peripheral type: a Nucleo described by a ``[[peripherals]]`` table.

::

    [[peripherals]]
    name = "bench"
    type = "nucleo"
    board = "nucleo-f401re"     # a Nucleo board id (`clawseed-edge boards list`)
    port = "/dev/serial/by-id/usb-STMicroelectronics_STM32_STLink_...-if02"  # optional
    watchdog_ms = 3000          # the board-side watchdog; 0 turns it off
    hardware_watchdog_ms = 0    # the MCU's own watchdog (opt-in; once on, only a reset stops it)

    [[peripherals.devices]]     # the same keys as for a Pi header
    name = "green_led"
    pin = "D13"                 # or "PA5", or the alias "led1"
    kind = "led"

With ``--sim`` the table attaches a virtual board running the repository's firmware instead of
the USB one; nothing else changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import msgspec

from clawseed_edge.api import Peripheral

from ..gpio import DeviceConfig

__all__ = ["NucleoFactory", "NucleoSettings"]


class NucleoSettings(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, frozen=True):
    """A ``[[peripherals]]`` table of type ``nucleo``.

    Attributes:
        name: The peripheral's name, unique in the config.
        type: Always ``nucleo``.
        board: A Nucleo board id (``nucleo-f401re``); required.
        port: Device path, ``/dev/serial/by-id`` name or pyserial URL; unset: the one Nucleo on
            USB, found by its ST-LINK's USB id.
        watchdog_ms: The board-side watchdog period in milliseconds (0: off); the host pings
            at a third of it.
        request_timeout_s: How long one request waits for the board's reply, seconds.
        hardware_watchdog_ms: The MCU's hardware watchdog (``machine.WDT``) timeout in
            milliseconds, 500..32000 (0: off, the default). It resets the board when the
            firmware's loop hangs; it cannot be stopped once started (see docs/nucleo.md).
        devices: The wiring, ``[[peripherals.devices]]`` tables.
    """

    name: str
    type: Literal["nucleo"]
    board: str
    port: str | None = None
    watchdog_ms: int = 3000
    request_timeout_s: float = 2.0
    hardware_watchdog_ms: int = 0
    devices: tuple[DeviceConfig, ...] = ()


class NucleoFactory:
    """Builds a :class:`~.board.SerialBoard` from a :class:`NucleoSettings` table."""

    settings = NucleoSettings

    def create(
        self, settings: NucleoSettings, *, sim: bool = False, source: str, key: str
    ) -> Peripheral:
        """An unconnected SerialBoard; ``sim`` attaches a virtual board.

        Raises:
            ConfigInvalid: A timing value out of range (names the key).
            BoardNotFound, HardwareError, PinInvalid, PinReserved, PinInUse,
            PinModeUnsupported: Bad board or wiring; messages name ``source``.
        """
        from clawseed_edge.api import ConfigInvalid

        from .board import SerialBoard
        from .link import LinkOptions

        if settings.watchdog_ms and not 100 <= settings.watchdog_ms <= 3_600_000:
            raise ConfigInvalid(
                "watchdog_ms must be 0 (off) or 100..3600000", file=source, key=f"{key}.watchdog_ms"
            )
        if not 0.05 <= settings.request_timeout_s <= 60:
            raise ConfigInvalid(
                "request_timeout_s must be 0.05..60 seconds",
                file=source,
                key=f"{key}.request_timeout_s",
            )
        hw_wdt = settings.hardware_watchdog_ms
        if hw_wdt and not 500 <= hw_wdt <= 32_000:
            raise ConfigInvalid(
                "hardware_watchdog_ms must be 0 (off) or 500..32000 (the STM32's longest)",
                file=source,
                key=f"{key}.hardware_watchdog_ms",
            )
        options = LinkOptions(
            request_timeout_s=settings.request_timeout_s,
            watchdog_ms=settings.watchdog_ms,
            hardware_watchdog_ms=hw_wdt,
        )
        return SerialBoard(
            settings.board,
            settings.devices,
            name=settings.name,
            port=settings.port,
            sim=sim,
            options=options,
            source=source,
            devices_key=f"{key}.devices",
        )

    def devices(self, settings: NucleoSettings) -> Sequence[str]:
        return [d.name for d in settings.devices]

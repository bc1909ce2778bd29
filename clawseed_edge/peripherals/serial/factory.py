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

from typing import Literal

from clawseed_edge.api import ConfigInvalid, Peripheral

from ..wired.factory import WiredBoardFactory, WiredSettings

__all__ = ["NUCLEO", "NucleoFactory", "NucleoSettings"]


class NucleoSettings(WiredSettings, forbid_unknown_fields=True, kw_only=True, frozen=True):
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

    type: Literal["nucleo"]
    port: str | None = None
    watchdog_ms: int = 3000
    request_timeout_s: float = 2.0
    hardware_watchdog_ms: int = 0


class NucleoFactory(WiredBoardFactory):
    """Builds a :class:`~.board.SerialBoard` from a :class:`NucleoSettings` table; ``sim``
    attaches a virtual board running the repository's firmware."""

    settings = NucleoSettings

    def check(self, settings: NucleoSettings, *, source: str, key: str) -> None:
        """Refuse link timings out of range (ConfigInvalid naming the key)."""
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

    def build(
        self, settings: NucleoSettings, *, sim: bool, source: str, devices_key: str
    ) -> Peripheral:
        from .board import SerialBoard
        from .link import LinkOptions

        options = LinkOptions(
            request_timeout_s=settings.request_timeout_s,
            watchdog_ms=settings.watchdog_ms,
            hardware_watchdog_ms=settings.hardware_watchdog_ms,
        )
        return SerialBoard(
            settings.board,
            settings.devices,
            name=settings.name,
            port=settings.port,
            sim=sim,
            options=options,
            source=source,
            devices_key=devices_key,
        )


#: The factory of the built-in ``nucleo`` type (``registry.default_registry`` loads it by name).
NUCLEO = NucleoFactory()

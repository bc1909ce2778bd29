"""What a :class:`~.link.BoardLink` is opened with and checks first: its timing
(:class:`LinkOptions`), how a port is opened and found, and the firmware's ``hello``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from clawseed_edge.api import BoardNotFound, BoardProtocolError

from ..boards import BoardSpec
from .bundle import EXPECTED_FIRMWARE
from .pintable import table_hash
from .ports import PortLister, find_ports

__all__ = ["LinkOptions", "Opener", "check_hello", "find_board_port", "open_serial"]

Opener = Callable[[str], Any]
"""Opens a port (device path or pyserial URL) and returns a pyserial-like object."""


@dataclass(frozen=True)
class LinkOptions:
    """Timing of a link (seconds).

    Attributes:
        request_timeout_s: How long one request waits for its reply.
        hello_timeout_s: How long the handshake waits (a board may still be booting).
        backoff_s: First and longest pause between reconnection attempts.
        watchdog_ms: The board-side watchdog period set after the handshake (0: off); the link
            pings at a third of it so a healthy host never trips it.
        hardware_watchdog_ms: Start the MCU's hardware watchdog (``machine.WDT``) with this
            timeout after the handshake (0: leave it off). It resets the board when the
            firmware's loop hangs or the board sits at the REPL; once started, only a reset
            stops it.
    """

    request_timeout_s: float = 2.0
    hello_timeout_s: float = 5.0
    backoff_s: tuple[float, float] = (0.2, 5.0)
    watchdog_ms: int = 3000
    hardware_watchdog_ms: int = 0


def open_serial(port: str) -> Any:
    """pyserial's port at 115200 baud, held exclusively.

    Raises:
        BoardNotFound: It cannot be opened (the message says what to check).
    """
    import serial

    try:
        return serial.serial_for_url(port, baudrate=115200, timeout=0.1, exclusive=True)
    except (serial.SerialException, OSError, ValueError) as exc:
        raise BoardNotFound(
            f"cannot open {port}: {exc}; check the cable and that no other program holds it"
        ) from exc


def find_board_port(board: BoardSpec, serial_number: str | None, lister: PortLister) -> str:
    """The device path of the one ``board`` on USB (with ``serial_number``, that one).

    Raises:
        BoardNotFound: None found, or several and no serial number to tell them apart.
    """
    found = find_ports([board], serial_number=serial_number, lister=lister)
    if not found:
        raise BoardNotFound(
            f"no {board.id} found on USB (ST-LINK ids {', '.join(board.usb)}"
            + (f", serial {serial_number}" if serial_number else "")
            + "); plug it in or set port in the config"
        )
    if len(found) > 1 and serial_number is None:
        listed = ", ".join(f"{p.device} (serial {p.serial_number})" for p in found)
        raise BoardNotFound(f"several Nucleos are plugged in ({listed}); set port in the config")
    return found[0].device


def check_hello(name: str, board: BoardSpec, hello: dict[str, Any]) -> None:
    """Refuse firmware that is not this repository's for ``board``.

    Raises:
        BoardProtocolError: Another firmware version or protocol, another board, a stale pin
            table; each says to run deploy.
    """
    deploy = f"run `clawseed-edge deploy --board {board.id}`"
    expected = EXPECTED_FIRMWARE
    if hello.get("proto") != 1 or hello.get("fw") != expected:
        raise BoardProtocolError(
            f"{name} runs firmware {hello.get('fw')!r} (protocol {hello.get('proto')}); "
            f"this clawseed-edge needs {expected!r}: the board is stale, {deploy}"
        )
    if hello.get("board") != board.id:
        raise BoardProtocolError(
            f"{name} reports board {hello.get('board')!r}, the config says "
            f"{board.id!r}: fix board in the config or {deploy}"
        )
    if hello.get("pins_hash") != table_hash(board):
        raise BoardProtocolError(
            f"{name}'s pin table is stale (the board file changed since the last deploy): {deploy}"
        )

"""Finding Nucleo boards on USB: the ST-LINK's virtual COM port, by VID:PID and serial number.

The ids come from the board files (``usb = [...]``: the ST-LINK probe's ids, which identify the
probe, not the MCU). pyserial's ``list_ports`` is imported on use.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from clawseed_edge.api import BoardNotFound

from ..boards import BoardSpec

__all__ = ["FoundPort", "PortLister", "find_ports", "list_usb_ports", "pick_port"]


@dataclass(frozen=True, slots=True)
class FoundPort:
    """A serial port whose USB ids belong to a Nucleo's ST-LINK."""

    device: str
    usb: str  # "0483:374B"
    serial_number: str | None
    description: str = ""


PortLister = Callable[[], Iterable[FoundPort]]
"""Returns every USB serial port (tests and the virtual board pass their own)."""


def list_usb_ports() -> list[FoundPort]:
    """Every USB serial port pyserial sees, with its ids."""
    from serial.tools import list_ports

    found = []
    for info in list_ports.comports():
        if info.vid is None or info.pid is None:
            continue
        usb = f"{info.vid:04X}:{info.pid:04X}"
        found.append(FoundPort(info.device, usb, info.serial_number, info.description or ""))
    return found


def find_ports(
    boards: Sequence[BoardSpec],
    *,
    serial_number: str | None = None,
    lister: PortLister = list_usb_ports,
) -> list[FoundPort]:
    """The ports whose USB ids match any of ``boards`` (and ``serial_number`` when given)."""
    ids = {u.upper() for b in boards for u in b.usb}
    return [
        p
        for p in lister()
        if p.usb.upper() in ids and (serial_number is None or p.serial_number == serial_number)
    ]


def pick_port(boards: Sequence[BoardSpec], *, lister: PortLister = list_usb_ports) -> FoundPort:
    """The one Nucleo plugged in.

    Raises:
        BoardNotFound: None is plugged in, or several are (each is listed; pass ``--port``).
    """
    found = find_ports(boards, lister=lister)
    if not found:
        ids = sorted({u for b in boards for u in b.usb})
        raise BoardNotFound(
            f"no Nucleo found on USB (looked for ST-LINK ids {', '.join(ids)}); plug the board "
            "in with a data cable, or pass --port /dev/ttyACM0"
        )
    if len(found) > 1:
        listed = "; ".join(f"{p.device} (serial {p.serial_number or '?'})" for p in found)
        raise BoardNotFound(f"several Nucleos are plugged in: {listed}; pass --port to pick one")
    return found[0]

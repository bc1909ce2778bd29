"""Board pinouts as configured: which pin carries which device, the reserved and the free ones.

The pins come from the board files (:class:`~.boards.BoardSpec`), the wiring from the
peripherals that own the pins (a :class:`~.wired.board.WiredBoard`'s devices, a sensor bank's
I2C bus on the Pi header). The MCP server's ``board://`` resources serve these documents.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .boards import BoardSpec

__all__ = ["board_pinout", "pinouts"]

#: The capabilities of the Pi header's I2C bus 1 pins (a sensor bank on bus 1 uses them).
_I2C_CAPS = ("i2c_sda", "i2c_scl")


def board_pinout(
    board: BoardSpec, used: Mapping[str, Mapping[str, Any]], *, peripheral: str | None
) -> dict[str, Any]:
    """One board's pins as plain data.

    Args:
        board: The board file.
        used: Canonical pin name -> what uses it (``{"device", "kind", "mode"}``).
        peripheral: The peripheral that drives the board (None: nothing configured on it).

    Every pin has ``pin``, ``header``, ``caps``, ``free`` and, when it applies, ``reserved``
    (the board file's reason), ``used_by`` and ``note``.
    """
    pins = []
    for spec in board.pins:
        row: dict[str, Any] = {"pin": spec.name, "header": spec.header, "caps": list(spec.caps)}
        if spec.number is not None:
            row["number"] = spec.number
        if spec.note:
            row["note"] = spec.note
        reason = board.pin_reservation(spec)
        if reason is not None:
            row["reserved"] = reason
        if spec.name in used:
            row["used_by"] = dict(used[spec.name])
        row["free"] = reason is None and spec.name not in used
        pins.append(row)
    names = set(board.pin_names())
    return {
        "board": board.id,
        "name": board.name,
        "family": board.family,
        "peripheral": peripheral,
        "pins": pins,
        "free": [row["pin"] for row in pins if row["free"]],
        "other_reserved": {r.pin: r.reason for r in board.reserved if r.pin not in names},
        "aliases": dict(board.aliases),
    }


def pinouts(peripherals: Sequence[Any], header: BoardSpec | None = None) -> list[dict[str, Any]]:
    """The pinout of every board a peripheral drives, and of the Pi ``header`` when none does.

    A sensor bank with a sensor on I2C bus 1 marks the Pi header's SDA and SCL pins as used.
    """
    boards: list[tuple[BoardSpec, str | None, dict[str, dict[str, Any]]]] = []
    for p in peripherals:
        board = getattr(p, "board", None)
        if isinstance(board, BoardSpec) and hasattr(p, "devices"):
            used = {
                d.pin_name: {
                    "device": d.name,
                    "kind": d.kind,
                    "mode": "output" if d.is_output else "input",
                }
                for d in p.devices()
            }
            boards.append((board, p.name, used))
    driven = {b.id for b, _, _ in boards}
    if header is not None and header.family != "mcu" and header.id not in driven:
        boards.insert(0, (header, None, {}))
    for p in peripherals:
        if 1 not in getattr(p, "bus_numbers", lambda: [])():
            continue
        for board, _, used in boards:
            if board.family == "mcu" or board.id != getattr(p, "board_type", None):
                continue
            for spec in board.pins:
                if spec.name not in used and any(spec.can(cap) for cap in _I2C_CAPS):
                    used[spec.name] = {
                        "device": f"I2C bus 1 ({p.name})",
                        "kind": "i2c",
                        "mode": "i2c",
                    }
    return [board_pinout(b, used, peripheral=name) for b, name, used in boards]

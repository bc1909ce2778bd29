"""Board pinouts as configured: which pin carries which device, the reserved and the free ones.

The pins come from the board files (:class:`~.boards.BoardSpec`), the wiring from the
peripherals that own the pins (a :class:`~.wired.board.WiredBoard`'s devices, a sensor bank's
I2C bus on the Pi header, and the pin of its 1-Wire or DHT sensors, which the kernel overlay in
config.txt sets). The MCP server's ``board://`` resources serve these documents.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .boards import BoardSpec

__all__ = ["board_pinout", "overlay_pins", "pinouts", "read_config_txt"]

#: The capabilities of the Pi header's I2C bus 1 pins (a sensor bank on bus 1 uses them).
_I2C_CAPS = ("i2c_sda", "i2c_scl")
#: Where Raspberry Pi OS keeps config.txt (Bookworm, then the older place); read at most this.
CONFIG_TXT_PATHS = (Path("/boot/firmware/config.txt"), Path("/boot/config.txt"))
MAX_CONFIG_TXT_BYTES = 64 * 1024
#: The overlay of each kernel-pin driver, and the pin it uses when ``gpiopin`` is not given.
_OVERLAYS = {"ds18b20": "w1-gpio", "dht11": "dht11", "dht22": "dht11"}
_DEFAULT_OVERLAY_PIN = 4
_DTOVERLAY = re.compile(r"^\s*dtoverlay\s*=\s*([\w-]+)((?:,[^#\s]*)?)", re.MULTILINE)


def read_config_txt(paths: Sequence[Path] = CONFIG_TXT_PATHS) -> str | None:
    """The Pi's config.txt (its first ``MAX_CONFIG_TXT_BYTES``), or None off a Pi."""
    for path in paths:
        try:
            with path.open("rb") as f:
                return f.read(MAX_CONFIG_TXT_BYTES).decode("utf-8", "replace")
        except OSError:
            continue
    return None


def overlay_pins(config_txt: str) -> dict[str, int]:
    """``{"w1-gpio": 17, "dht11": 4}``: the data pin of each ``dtoverlay=`` line of config.txt
    (``gpiopin=N``, or the overlay's default GPIO4); the last line of an overlay wins."""
    pins: dict[str, int] = {}
    for match in _DTOVERLAY.finditer(config_txt):
        pin = _DEFAULT_OVERLAY_PIN
        for param in match.group(2).split(","):
            key, _, value = param.partition("=")
            if key.strip() == "gpiopin" and value.strip().isdigit():
                pin = int(value.strip())
        pins[match.group(1)] = pin
    return pins


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


def pinouts(
    peripherals: Sequence[Any], header: BoardSpec | None = None, config_txt: str | None = None
) -> list[dict[str, Any]]:
    """The pinout of every board a peripheral drives, and of the Pi ``header`` when none does.

    A sensor bank with a sensor on I2C bus 1 marks the Pi header's SDA and SCL pins as used;
    its 1-Wire and DHT sensors mark their overlay's data pin, from ``config_txt`` (the Pi's
    config.txt; None: not read, the overlay's default GPIO4 is shown and says so).
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
        _mark_kernel_pins(p, boards, config_txt)
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


def _mark_kernel_pins(
    p: Any,
    boards: Sequence[tuple[BoardSpec, str | None, dict[str, dict[str, Any]]]],
    config_txt: str | None,
) -> None:
    """Mark the data pin of ``p``'s 1-Wire and DHT sensors on the Pi header it is on."""
    sensors: list[tuple[str, str]] = getattr(p, "kernel_sensors", list)()
    if not sensors:
        return
    found = overlay_pins(config_txt) if config_txt is not None else {}
    by_overlay: dict[str, list[str]] = {}
    for name, driver in sensors:
        by_overlay.setdefault(_OVERLAYS[driver], []).append(name)
    for board, _, used in boards:
        if board.family == "mcu" or board.id != getattr(p, "board_type", None):
            continue
        for overlay, names in by_overlay.items():
            pin = found.get(overlay)
            if config_txt is None:
                source = "the overlay's default pin (config.txt not read)"
            elif pin is None:
                source = f"the overlay's default pin: config.txt has no dtoverlay={overlay}"
            else:
                source = f"dtoverlay={overlay} in config.txt"
            pin_name = f"GPIO{_DEFAULT_OVERLAY_PIN if pin is None else pin}"
            if pin_name in used or pin_name not in board.pin_names():
                continue  # a configured device's own use wins; a pin the board lacks is no row
            bus = "1-Wire bus" if overlay == "w1-gpio" else "DHT data"
            used[pin_name] = {
                "device": f"{bus} ({', '.join(names)})",
                "kind": "1-wire" if overlay == "w1-gpio" else "dht",
                "mode": "input",
                "source": source,
            }

"""The firmware's pin table, generated from the board files.

The firmware cannot read TOML or import the package, so each Nucleo board file becomes a small
MicroPython module, ``firmware/pins/<board_id>.py``, deployed to the board as
``clawseed_pins.py``. It holds what the firmware needs to refuse a request on its own: every pin
with its capability bits, ADC channel and timer channel, the header labels and aliases, the
reserved pins with their reasons, and the I2C pins.

``HASH`` fingerprints the table's content: ``hello`` reports it, and the host compares it with
:func:`table_hash` of its own board file, so a board running a stale table is told to redeploy.

Regenerate after editing a board file (a test fails while a committed table is stale)::

    python -m clawseed_edge.peripherals.serial.pintable
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from ..boards import BoardRegistry, BoardSpec, timer_channel

__all__ = ["CAP_BITS", "FIRMWARE_DIR", "render", "table_data", "table_hash", "write_all"]

FIRMWARE_DIR = Path(__file__).resolve().with_name("firmware")
"""The firmware, shipped as package data; the repository's top-level ``firmware/`` is a
symlink to it (one copy, as for the board files)."""

CAP_BITS = {"digital_in": 1, "digital_out": 2, "pwm": 4, "adc": 8}
"""Capability bits as the firmware tests them (clawseed_core.CAP_*)."""


def table_data(board: BoardSpec) -> dict[str, Any]:
    """The table as plain data: what is rendered and what the hash covers."""
    pins: dict[str, list[int]] = {}
    names: dict[str, str] = {}
    sda = scl = None
    for pin in board.pins:
        bits = sum(bit for cap, bit in CAP_BITS.items() if pin.can(cap))
        tim, ch = timer_channel(pin.timer) if pin.timer else (0, 0)
        pins[pin.name] = [bits, -1 if pin.adc is None else pin.adc, tim, ch]
        if pin.header:
            names[pin.header.upper()] = pin.name
        if pin.can("i2c_sda") and sda is None:
            sda = pin.name
        if pin.can("i2c_scl") and scl is None:
            scl = pin.name
    for alias, target in board.aliases.items():
        names[alias.upper()] = target.upper()
    reserved = {r.pin: r.reason for r in board.reserved if not r.pin.startswith("BOARD")}
    return {
        "board": board.id,
        "pins": pins,
        "names": dict(sorted(names.items())),
        "reserved": dict(sorted(reserved.items())),
        "i2c": [sda, scl] if sda and scl else None,
    }


def table_hash(board: BoardSpec) -> str:
    """A 16-hex-digit fingerprint of the board's pin table (what ``hello`` reports)."""
    canonical = json.dumps(table_data(board), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def render(board: BoardSpec) -> str:
    """The MicroPython source of ``board``'s pin table."""
    data = table_data(board)
    lines = [
        f"# Pin table of {board.id}, generated from its board file by",
        "# `python -m clawseed_edge.peripherals.serial.pintable`; do not edit (a test checks it).",
        f"BOARD = {json.dumps(board.id)}",
        f"HASH = {json.dumps(table_hash(board))}",
        "# name: (capability bits: 1 in, 2 out, 4 pwm, 8 adc; ADC channel or -1; timer; channel)",
        "PINS = {",
    ]
    for name, (bits, adc, tim, ch) in data["pins"].items():
        lines.append(f"    {json.dumps(name)}: ({bits}, {adc}, {tim}, {ch}),")
    lines.append("}")
    lines.append("# header labels and aliases, upper case -> pin")
    lines.append("NAMES = {")
    lines.extend(f"    {json.dumps(k)}: {json.dumps(v)}," for k, v in data["names"].items())
    lines.append("}")
    lines.append("RESERVED = {")
    lines.extend(f"    {json.dumps(k)}: {json.dumps(v)}," for k, v in data["reserved"].items())
    lines.append("}")
    i2c = data["i2c"]
    lines.append("I2C = " + (f"({json.dumps(i2c[0])}, {json.dumps(i2c[1])})" if i2c else "None"))
    return "\n".join(lines) + "\n"


def table_path(board_id: str, firmware_dir: Path = FIRMWARE_DIR) -> Path:
    """Where the committed table of ``board_id`` lives."""
    return firmware_dir / "pins" / f"{board_id.replace('-', '_')}.py"


def write_all(
    firmware_dir: Path = FIRMWARE_DIR, registry: BoardRegistry | None = None
) -> list[Path]:
    """Write the table of every MCU board; returns the paths written."""
    registry = registry or BoardRegistry.load()
    written = []
    for board in registry.list():
        if board.family != "mcu":
            continue
        path = table_path(board.id, firmware_dir)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render(board), encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":
    for written_path in write_all():
        print(written_path, file=sys.stdout)

"""``clawseed-edge flash BOARD --firmware FILE``: MicroPython onto a Nucleo through pyocd."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    """Add the ``flash`` command."""
    parser = subparsers.add_parser(
        "flash",
        help="flash a MicroPython image onto a Nucleo through its ST-LINK (pyocd)",
        description="Erase, program, verify and reset. The image is MicroPython's build for "
        "the board (see docs/nucleo.md for where to get it); afterwards run "
        "`clawseed-edge deploy` to put this repository's firmware on it.",
    )
    parser.add_argument("board_id", metavar="BOARD", help="a Nucleo board id (nucleo-f401re)")
    parser.add_argument(
        "--firmware", required=True, type=Path, metavar="FILE", help="the .hex or .bin image"
    )
    parser.add_argument(
        "--pack",
        type=Path,
        metavar="FILE.pack",
        help="the CMSIS device pack for the MCU (needed offline; the error names it)",
    )
    parser.add_argument("--probe", metavar="UID", help="the ST-LINK's unique id, if several")
    parser.set_defaults(func=_flash)


def _flash(args: argparse.Namespace) -> int:
    from clawseed_edge.api import ClawseedError
    from clawseed_edge.peripherals.boards import default_registry
    from clawseed_edge.peripherals.serial.flash import flash_firmware

    from .common import fail

    try:
        board = default_registry().get(args.board_id)
    except ClawseedError as exc:
        return fail(str(exc), 2)
    if board.family != "mcu":
        return fail(f"{board.id} is not a microcontroller board; flash works on Nucleos", 2)
    if board.micropython_board is None:
        return fail(
            f"MicroPython has no {board.id.upper().replace('-', '_')} board, so there is no "
            f"image to flash onto a {board.name}; see docs/nucleo.md",
            2,
        )
    bar = _ProgressBar(f"flashing {args.firmware.name} to {board.id}")
    try:
        result = flash_firmware(
            board, args.firmware, pack=args.pack, probe=args.probe, progress=bar.update
        )
    except ClawseedError as exc:
        bar.end()
        return fail(str(exc))
    bar.end()
    print(
        f"flashed {result.bytes} bytes of {Path(result.image).name} to {board.id} "
        f"(target {result.target}, probe {result.probe}), verified and reset; now run "
        f"`clawseed-edge deploy --board {board.id}`"
    )
    return 0


class _ProgressBar:
    """A one-line progress bar on stderr (0.0 .. 1.0)."""

    def __init__(self, label: str, width: int = 30) -> None:
        self.label = label
        self.width = width
        self.shown = False

    def update(self, fraction: float) -> None:
        filled = int(max(0.0, min(1.0, fraction)) * self.width)
        bar = "#" * filled + "." * (self.width - filled)
        print(f"\r{self.label} [{bar}] {fraction:4.0%}", end="", file=sys.stderr, flush=True)
        self.shown = True

    def end(self) -> None:
        if self.shown:
            print(file=sys.stderr)

"""``clawseed-edge boards list`` and ``clawseed-edge boards show ID``."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO


def register(subparsers: Any) -> None:
    """Add the ``boards`` command group."""
    parser = subparsers.add_parser("boards", help="list the known boards and show their pins")
    sub = parser.add_subparsers(dest="boards_command", metavar="SUBCOMMAND")
    p_list = sub.add_parser("list", help="list the known boards")
    p_list.add_argument("--json", action="store_true", help="print JSON")
    p_list.set_defaults(func=_list)
    p_show = sub.add_parser("show", help="pins, reserved pins, aliases and flash target of a board")
    p_show.add_argument("board_id", metavar="ID", help="a board id from `boards list`")
    p_show.add_argument("--json", action="store_true", help="print JSON")
    p_show.set_defaults(func=_show)
    parser.set_defaults(func=lambda args: (parser.print_help(), 2)[1])


def _list(args: argparse.Namespace) -> int:
    return list_boards(as_json=args.json)


def _show(args: argparse.Namespace) -> int:
    return show_board(args.board_id, as_json=args.json)


def list_boards(*, as_json: bool = False, out: TextIO | None = None) -> int:
    """Print every known board; returns the exit code."""
    from clawseed_edge.api import ConfigInvalid
    from clawseed_edge.peripherals.boards import BoardRegistry

    out = out or sys.stdout
    try:
        boards = BoardRegistry.load().list()
    except ConfigInvalid as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if as_json:
        rows = [
            {"id": b.id, "name": b.name, "family": b.family, "usb": list(b.usb)} for b in boards
        ]
        print(json.dumps(rows, indent=2), file=out)
        return 0
    width = max(len(b.id) for b in boards)
    for b in boards:
        usb = f"  usb {', '.join(b.usb)}" if b.usb else ""
        print(f"{b.id:<{width}}  {b.family:<4}  {b.name}{usb}", file=out)
    return 0


def show_board(board_id: str, *, as_json: bool = False, out: TextIO | None = None) -> int:
    """Print one board's pins, reserved pins, aliases and flash target; returns the exit code."""
    import msgspec

    from clawseed_edge.api import BoardNotFound, ConfigInvalid
    from clawseed_edge.peripherals.boards import BoardRegistry

    out = out or sys.stdout
    try:
        board = BoardRegistry.load().get(board_id)
    except (BoardNotFound, ConfigInvalid) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if as_json:
        print(json.dumps(msgspec.to_builtins(board), indent=2), file=out)
        return 0
    print(f"{board.name} ({board.id}), family {board.family}", file=out)
    if board.notes:
        print(f"  {board.notes}", file=out)
    if board.usb:
        print(f"USB ids: {', '.join(board.usb)}", file=out)
    if board.flash_target:
        print(f"flash target (pyocd): {board.flash_target}", file=out)
    if board.family == "mcu":
        if board.micropython_board:
            print(f"MicroPython board: {board.micropython_board} (mpy-cross -march="
                  f"{board.mpy_march})", file=out)  # fmt: skip
        else:
            print(f"MicroPython has no {board.id.upper().replace('-', '_')} board: there is no "
                  "image to flash (see docs/nucleo.md)", file=out)  # fmt: skip
    print("pins:", file=out)
    for pin in board.pins:
        reason = board.pin_reservation(pin)
        header = f"[{pin.header}]" if pin.header else ""
        flag = f"  RESERVED: {reason}" if reason else ""
        extra = [f"ADC ch{pin.adc}"] if pin.adc is not None else []
        extra += [pin.timer] if pin.timer else []
        extra += [f"no {cap}: {why}" for cap, why in pin.unavailable.items()]
        note = (
            f"  ({'; '.join([*extra, pin.note] if pin.note else extra)})"
            if extra or pin.note
            else ""
        )
        print(f"  {pin.name:<7} {header:<9} {', '.join(pin.caps)}{note}{flag}", file=out)
    others = [r for r in board.reserved if r.pin not in board.pin_names()]
    if others:
        print("other reserved header positions:", file=out)
        for r in others:
            print(f"  {r.pin:<9} {r.reason}", file=out)
    if board.aliases:
        print("aliases:", file=out)
        for alias, target in board.aliases.items():
            print(f"  {alias} = {target}", file=out)
    return 0

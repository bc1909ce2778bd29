"""``clawseed-edge sim nucleo``: a virtual Nucleo running the real firmware behind a pty."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from typing import Any


def register(subparsers: Any) -> None:
    """Add the ``sim`` command group."""
    parser = subparsers.add_parser("sim", help="simulated boards for testing without hardware")
    sub = parser.add_subparsers(dest="sim_command", metavar="BOARD")
    p_nucleo = sub.add_parser(
        "nucleo",
        help="a virtual Nucleo on a pseudo-terminal (prints its path on the first line)",
    )
    p_nucleo.add_argument(
        "--board", default="nucleo-f401re", metavar="ID", help="a Nucleo board id"
    )
    p_nucleo.add_argument(
        "--baud", type=int, default=None, help="emulate the wire at this rate (bits per second)"
    )
    p_nucleo.add_argument(
        "--adc",
        action="append",
        default=[],
        metavar="PIN=RAW",
        help="a raw 16-bit ADC reading for a pin (PA0=32768); repeatable",
    )
    p_nucleo.set_defaults(func=_nucleo)
    parser.set_defaults(func=lambda args: (parser.print_help(), 2)[1])


def _nucleo(args: argparse.Namespace) -> int:
    from clawseed_edge.api import ClawseedError

    from .common import fail

    try:
        from clawseed_edge.peripherals.boards import default_registry
        from clawseed_edge.peripherals.serial.sim_machine import SimBoardState
        from clawseed_edge.peripherals.serial.virtual import VirtualBoard

        board = default_registry().get(args.board)
        if board.family != "mcu":
            return fail(
                f"{args.board} is not a Nucleo; pick one of the mcu boards in `boards list`"
            )
        state = SimBoardState(adc=_parse_adc(args.adc, board))
        virtual = VirtualBoard(board.id, baud=args.baud, state=state).start()
    except (ClawseedError, ValueError) as exc:
        return fail(str(exc), 2)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    print(virtual.path, flush=True)
    print(
        f"virtual {board.id} running the repository's firmware at {virtual.path}; Ctrl-C stops it",
        file=sys.stderr,
        flush=True,
    )
    try:
        while not stop.wait(0.5):
            if virtual.error is not None:
                return fail(f"the virtual board stopped: {virtual.error!r}")
    finally:
        virtual.close()
    return 0


def _parse_adc(items: list[str], board: Any) -> dict[str, int]:
    values: dict[str, int] = {}
    for item in items:
        pin, sep, raw = item.partition("=")
        if not sep or not raw.strip().isdigit() or not 0 <= int(raw) <= 65535:
            raise ValueError(f"--adc {item!r}: write PIN=RAW with RAW 0..65535 (PA0=32768)")
        # The firmware reads the ADC by canonical pin name: resolve labels (A0) and refuse a
        # pin it would refuse, with the board file's reason.
        spec = board.lookup(pin.strip())
        if not spec.can("adc"):
            why = spec.why_not("adc") or f"it has only {', '.join(spec.caps) or 'nothing'}"
            raise ValueError(f"--adc {item!r}: {spec.name} on {board.id} is not analog: {why}")
        values[spec.name] = int(raw)
    return values

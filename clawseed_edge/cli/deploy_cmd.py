"""``clawseed-edge deploy``: this repository's firmware onto a Nucleo running MicroPython."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    """Add the ``deploy`` command."""
    parser = subparsers.add_parser(
        "deploy",
        help="copy the firmware (compiled .mpy) and the board's pin table to a Nucleo",
        description="Interrupts the running firmware, copies and verifies the files through "
        "the raw REPL, soft-resets, and confirms the new firmware answers hello.",
    )
    parser.add_argument(
        "--board",
        metavar="ID",
        help="the Nucleo's board id (default: the one nucleo peripheral in the config)",
    )
    parser.add_argument(
        "--port",
        metavar="PORT",
        help="device path, /dev/serial/by-id name or pyserial URL (default: the one Nucleo "
        "plugged in)",
    )
    parser.add_argument(
        "--firmware-dir",
        type=Path,
        metavar="DIR",
        help="a firmware directory of your own (default: the firmware shipped with the package)",
    )
    parser.add_argument(
        "--source",
        action="store_true",
        help="copy .py sources instead of compiled .mpy (uses more board RAM; for debugging)",
    )
    parser.set_defaults(func=_deploy)


def _deploy(args: argparse.Namespace) -> int:
    from clawseed_edge.api import ClawseedError
    from clawseed_edge.peripherals.boards import default_registry
    from clawseed_edge.peripherals.serial.bundle import FirmwareBundle
    from clawseed_edge.peripherals.serial.deploy import deploy_bundle
    from clawseed_edge.peripherals.serial.pintable import FIRMWARE_DIR, table_hash
    from clawseed_edge.peripherals.serial.ports import pick_port

    from .common import fail

    try:
        board_id, config_port = args.board, None
        if board_id is None:
            board_id, config_port = _from_config(args)
        board = default_registry().get(board_id)
        if board.family != "mcu":
            return fail(f"{board.id} is not a Nucleo; deploy puts firmware on microcontrollers", 2)
        port = args.port or config_port or pick_port([board]).device
        firmware_dir = args.firmware_dir or FIRMWARE_DIR
        bundle = FirmwareBundle.build(board, firmware_dir, compiled=not args.source)
        total = sum(len(data) for data in bundle.files.values())
        print(f"deploying firmware {bundle.version} for {board.id} to {port} ({total} bytes)")
        result = deploy_bundle(port, bundle, pins_hash=table_hash(board), progress=_show_progress)
    except ClawseedError as exc:
        print(file=sys.stderr)
        return fail(str(exc))
    print(file=sys.stderr)
    hello = result.hello or {}
    print(
        f"deployed {len(result.files)} files ({result.bytes} bytes), verified by SHA-256; "
        f"the board answers: firmware {hello.get('fw')}, MicroPython {hello.get('micropython')}, "
        f"{hello.get('mem_free')} bytes free"
    )
    return 0


def _from_config(args: argparse.Namespace) -> tuple[str, str | None]:
    """(board id, port or None) of the one ``type = "nucleo"`` peripheral in the config.

    Raises:
        ConfigInvalid: The config names none or several (the message says to pass --board).
    """
    from clawseed_edge.api import ConfigInvalid
    from clawseed_edge.config.file import load_config

    loaded = load_config(getattr(args, "config", None))
    # The tables the loader validated: none is validated a second time.
    tables = [t for t in loaded.peripheral_tables or () if t.type == "nucleo"]
    if len(tables) != 1:
        found = ", ".join(f"{t.name} ({t.settings.board})" for t in tables) or "none"
        raise ConfigInvalid(
            f"pass --board ID: deploy needs one Nucleo and {loaded.source} names {found}",
            file=loaded.source,
        )
    return tables[0].settings.board, tables[0].settings.port


def _show_progress(name: str, written: int, size: int) -> None:
    print(f"\r  {name:<20} {written:>6}/{size} bytes", end="", file=sys.stderr, flush=True)

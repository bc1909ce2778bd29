"""``clawseed-edge hardware scan``: what is wired here, and the config tables that would use it.

The scan itself is :mod:`clawseed_edge.peripherals.scan` (read-only: identification reads the
datasheets define, never a register write); this module prints it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

__all__ = ["add_scan_parser"]


def add_scan_parser(sub: Any) -> None:
    """Add ``scan`` to the ``hardware`` group."""
    p_scan = sub.add_parser(
        "scan",
        help="I2C chips, 1-Wire sensors and Nucleo boards found here, as config tables",
        description="Scan every I2C bus (i2cdetect's probes, then only the identification "
        "reads the chips' datasheets define: nothing is written to a register), the 1-Wire "
        "sensors in /sys/bus/w1/devices and the Nucleo boards on USB, and print the "
        "[[sensors]] / [[displays]] / [[peripherals]] tables that would use them.",
    )
    p_scan.add_argument(
        "--sim",
        action="store_true",
        help="scan the simulated bus (a BME280 at 0x76) and a virtual Nucleo instead",
    )
    p_scan.add_argument("--json", action="store_true", help="print JSON")
    p_scan.add_argument(
        "--root",
        default="/",
        metavar="DIR",
        help="look for /dev and /sys under DIR (a copied tree; default /)",
    )
    p_scan.set_defaults(func=_scan)


def _scan(args: argparse.Namespace) -> int:
    from clawseed_edge.peripherals.scan import proposal_toml, scan_machine, simulated_buses

    buses = simulated_buses() if args.sim else None
    report = asyncio.run(scan_machine(Path(args.root), buses=buses, sim=args.sim))
    if args.json:
        print(
            json.dumps(
                {
                    "findings": [asdict(f) for f in report.findings],
                    "problems": list(report.problems),
                },
                indent=2,
            )
        )
        return 0
    if not report.findings:
        print("found nothing to propose")
    for f in report.findings:
        print(f"{f.where:<24} {f.what}")
    for problem in report.problems:
        print(f"note: {problem}")
    tables = proposal_toml(report.findings)
    if tables:
        print(
            "\n# For your config.toml (check names and boards; `clawseed-edge init` offers them):"
        )
        print(tables)
    return 0

"""Entry point of the ``clawseed-edge`` command.

Each command group lives in its own module ``clawseed_edge/cli/<group>_cmd.py`` exposing
``register(subparsers)``, which adds its parser(s) and sets ``func`` to a handler
``(argparse.Namespace) -> int``. Modules are discovered, so adding a group edits nothing here.
Command modules import heavy dependencies inside their handlers, never at module level.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence

from clawseed_edge import __version__


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser with every discovered command group."""
    parser = argparse.ArgumentParser(
        prog="clawseed-edge",
        description="AI-agent runtime for Raspberry Pi-class boards and microcontrollers.",
    )
    parser.add_argument("--version", action="version", version=f"clawseed-edge {__version__}")
    parser.add_argument(
        "--config",
        metavar="PATH",
        help="config file (default: $CLAWSEED_HOME/config.toml, home default ~/.clawseed-edge)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    package = importlib.import_module("clawseed_edge.cli")
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        if info.name.endswith("_cmd"):
            module = importlib.import_module(f"clawseed_edge.cli.{info.name}")
            module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return 2
    try:
        return int(func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())

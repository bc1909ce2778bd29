"""Entry point of the ``clawseed-edge`` command.

Each command group lives in its own module ``clawseed_edge/cli/<group>_cmd.py`` exposing
``register(subparsers)``, which adds its parser(s) and sets ``func`` to a handler
``(argparse.Namespace) -> int``. Modules are discovered, so adding a group edits nothing here.
Command modules import heavy dependencies inside their handlers, never at module level.
"""

from __future__ import annotations

import argparse
import importlib
import os
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
    _add_global_options(parser)
    parser.set_defaults(config=None)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    package = importlib.import_module("clawseed_edge.cli")
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        if info.name.endswith("_cmd"):
            module = importlib.import_module(f"clawseed_edge.cli.{info.name}")
            module.register(sub)
    for command in _subcommand_parsers(parser):
        _add_global_options(command)
    return parser


def _add_global_options(parser: argparse.ArgumentParser) -> None:
    """Options accepted before the command name and after it (``agent --config c.toml``).

    The default is SUPPRESS so that a subcommand's parser, which runs after the top-level one,
    does not overwrite a value given before the command name with its own default.
    """
    parser.add_argument(
        "--config",
        metavar="PATH",
        default=argparse.SUPPRESS,
        help="config file (default: $CLAWSEED_HOME/config.toml, home default ~/.clawseed-edge)",
    )


def _subcommand_parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """Every parser below ``parser`` (commands and their actions, e.g. ``memory list``)."""
    found: list[argparse.ArgumentParser] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):  # aliases share a parser
                found.append(child)
                found.extend(_subcommand_parsers(child))
    return found


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return 2
    try:
        code = int(func(args) or 0)
        # Inside the try: an unflushed buffer would otherwise fail at interpreter exit.
        sys.stdout.flush()
        return code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return _reader_went_away()


def _reader_went_away() -> int:
    """The reader of stdout closed it (``clawseed-edge memory list | head -1``): exit quietly.

    As the Python docs advise: point stdout at devnull so that the flush at interpreter exit
    does not raise a second BrokenPipeError, and exit with 1.
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout has no file descriptor (replaced in tests)
        pass
    return 1


if __name__ == "__main__":
    raise SystemExit(main())

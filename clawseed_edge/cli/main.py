"""Entry point of the ``clawseed-edge`` command.

Each command group lives in its own module ``clawseed_edge/cli/<group>_cmd.py`` exposing
``register(subparsers)``, which adds its parser(s) and sets ``func`` to a handler
``(argparse.Namespace) -> int``. Modules are discovered, so adding a group edits nothing here.
Command modules import heavy dependencies inside their handlers, never at module level.

A command line that names its command (``clawseed-edge gateway --sim``) registers only that
command's module when one is named after it (``gateway_cmd``): the other groups' imports and
parsers cost start-up time (about 60 ms CPU here) and their parsers play no part in parsing it.
Anything else (``--help``, no command, a command registered under another module's name) builds
the full parser.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from clawseed_edge import __version__


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The argument parser: every discovered command group, or only the one ``argv`` names.

    Args:
        argv: The command line about to be parsed (without the program name). When its
            command has a module of its own name, only that module is registered; ``None``
            builds the full parser.
    """
    if argv is not None:
        command = _command_named(argv)
        if command is not None and _has_command_module(command.replace("-", "_")):
            parser = _parser_with([command.replace("-", "_")])
            if command in _subcommand_choices(parser):
                return parser
    return _parser_with(_command_modules())


def _has_command_module(name: str) -> bool:
    """Whether ``clawseed_edge.cli.<name>_cmd`` exists (found, not imported)."""
    import importlib.util

    if not name.isidentifier():
        return False
    return importlib.util.find_spec(f"clawseed_edge.cli.{name}_cmd") is not None


def _command_modules() -> list[str]:
    """The discovered command groups, by module name without ``_cmd``, sorted."""
    import pkgutil  # the full parser only (help, no command): `run` never needs it

    package = importlib.import_module("clawseed_edge.cli")
    names = sorted(info.name for info in pkgutil.iter_modules(package.__path__))
    return [name[: -len("_cmd")] for name in names if name.endswith("_cmd")]


def _command_named(argv: Sequence[str]) -> str | None:
    """The command word of ``argv``: its first argument that is not a top-level option.

    ``--config PATH`` (or any abbreviation argparse accepts, ``--conf PATH``) takes the next
    argument as its value. ``None`` when there is no command word.
    """
    args = iter(argv)
    for arg in args:
        if arg == "--":
            return next(args, None)
        if not arg.startswith("-"):
            return arg
        if len(arg) > 2 and "=" not in arg and "--config".startswith(arg):
            next(args, None)
    return None


def _subcommand_choices(parser: argparse.ArgumentParser) -> dict[str, object]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _parser_with(groups: Sequence[str]) -> argparse.ArgumentParser:
    """The parser with the command groups ``groups`` (module names without ``_cmd``)."""
    parser = argparse.ArgumentParser(
        prog="clawseed-edge",
        description="AI-agent runtime for Raspberry Pi-class boards and microcontrollers.",
    )
    parser.add_argument("--version", action="version", version=f"clawseed-edge {__version__}")
    _add_global_options(parser)
    parser.set_defaults(config=None)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for group in groups:
        importlib.import_module(f"clawseed_edge.cli.{group}_cmd").register(sub)
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
    from clawseed_edge.api.lazy import without_httpx_cli

    without_httpx_cli()  # the service and the CLI never run httpx's own command line
    if argv is None:
        argv = sys.argv[1:]
    parser = build_parser(argv)
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

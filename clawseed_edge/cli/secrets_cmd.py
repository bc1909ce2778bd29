"""``clawseed-edge secrets set|list|remove``: the ``$CLAWSEED_HOME/secrets`` file (mode 0600).

Values are never printed: ``list`` shows names only, ``set`` reads the value from ``--value``
or from stdin (without echo on a terminal), so it need not appear in the shell history.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .common import fail

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add the ``secrets`` command group."""
    parser = subparsers.add_parser(
        "secrets", help="set, list and remove secrets ($CLAWSEED_HOME/secrets, mode 0600)"
    )
    sub = parser.add_subparsers(dest="secrets_command", metavar="ACTION", required=True)

    p = sub.add_parser("set", help="add or replace a secret (value from --value or stdin)")
    p.add_argument("name", help="environment-variable style name, e.g. ANTHROPIC_API_KEY")
    p.add_argument(
        "--value",
        help="the value (else read from stdin, without echo on a terminal; "
        "stdin keeps it out of the shell history)",
    )
    p.set_defaults(func=_set)

    p = sub.add_parser("list", help="list the secrets' names (never their values)")
    p.set_defaults(func=_list)

    p = sub.add_parser("remove", help="remove a secret")
    p.add_argument("name", help="the secret's name")
    p.set_defaults(func=_remove)


def _path() -> Path:
    from clawseed_edge.config.paths import clawseed_home

    return clawseed_home() / "secrets"


def _set(args: argparse.Namespace) -> int:
    from clawseed_edge.api import ConfigError
    from clawseed_edge.config.secrets import check_secret_name, set_secret

    try:
        # Check the name before asking for a value the user would then type for nothing.
        check_secret_name(args.name)
        value = args.value if args.value is not None else _read_value(args.name)
        set_secret(_path(), args.name, value)
    except ConfigError as exc:
        return fail(str(exc))
    print(f"set {args.name} in {_path()}")
    return 0


def _read_value(name: str) -> str:
    """The value from stdin: a prompt without echo on a terminal, else the first line."""
    if sys.stdin.isatty():
        import getpass

        return getpass.getpass(f"value of {name} (not shown): ")
    # A pipe (`pass show x | clawseed-edge secrets set X`): the first line, without its newline.
    return sys.stdin.readline().rstrip("\r\n")


def _list(args: argparse.Namespace) -> int:
    from clawseed_edge.api import ConfigError
    from clawseed_edge.config.secrets import read_secrets

    try:
        names = sorted(read_secrets(_path()))
    except ConfigError as exc:
        return fail(str(exc))
    for name in names:
        print(name)
    if not names:
        print(f"no secrets in {_path()}", file=sys.stderr)
    return 0


def _remove(args: argparse.Namespace) -> int:
    from clawseed_edge.api import ConfigError
    from clawseed_edge.config.secrets import remove_secret

    try:
        removed = remove_secret(_path(), args.name)
    except ConfigError as exc:
        return fail(str(exc))
    if not removed:
        return fail(
            f"no secret named {args.name} in {_path()}; `clawseed-edge secrets list` shows the names"
        )
    print(f"removed {args.name}")
    return 0

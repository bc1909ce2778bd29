"""``clawseed-edge plugins list``: the built-ins and the installed plugins of every kind."""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add the ``plugins`` command group."""
    parser = subparsers.add_parser(
        "plugins", help="list the built-ins and installed plugins of every kind"
    )
    sub = parser.add_subparsers(dest="plugins_command", metavar="SUBCOMMAND")
    listing = sub.add_parser(
        "list",
        help="providers, peripheral types, sensor drivers, tools, channels and hooks: built in "
        "or from an installed package, and why a plugin is ignored",
    )
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.set_defaults(func=lambda args: list_plugins(as_json=args.json))
    parser.set_defaults(func=lambda args: (parser.print_help(), 2)[1])


def list_plugins(*, as_json: bool = False, out: TextIO | None = None) -> int:
    """Print every kind's entry-point group, its built-ins and its installed plugins.

    Returns 1 when an installed plugin is ignored (it shadows a built-in, or two packages
    offer one name), else 0.
    """
    from clawseed_edge.config.plugins import default_registries

    out = out or sys.stdout
    catalogue = {kind: (reg.group, reg.catalogue()) for kind, reg in default_registries().items()}
    problems = any(row.problem for _, rows in catalogue.values() for row in rows)
    if as_json:
        data = {
            kind: {
                "group": group,
                "entries": [
                    {
                        "name": row.name,
                        "origin": row.origin,
                        "value": row.value,
                        "distribution": row.distribution,
                        "problem": row.problem,
                        "aliases": list(row.aliases),
                    }
                    for row in rows
                ],
            }
            for kind, (group, rows) in catalogue.items()
        }
        print(json.dumps(data, indent=2), file=out)
        return 1 if problems else 0
    for kind, (group, rows) in catalogue.items():
        print(f"{kind} (entry-point group {group})", file=out)
        width = max((len(row.name) for row in rows), default=0)
        for row in rows:
            where = "built-in" if row.origin == "built-in" else f"plugin from {row.distribution}"
            note = f"  (also {', '.join(row.aliases)})" if row.aliases else ""
            note += f"  {row.problem}" if row.problem else ""
            print(f"  {row.name:<{width}}  {where}{note}", file=out)
        if not rows:
            print("  (none)", file=out)
    return 1 if problems else 0

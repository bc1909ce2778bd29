"""``clawseed-edge config show|check``: the effective config, and validating a file.

``show`` prints what the runtime would use: the file (``--config``, else
``$CLAWSEED_HOME/config.toml``, else the embedded default) with ``CLAWSEED__*`` environment
overrides applied and every default filled in, as TOML, with credentials redacted.
``check`` validates a file as a run would, without opening hardware (the wiring against the
board, sensor drivers, the provider, the packages), and exits 1 with the run's error (it names
file and key).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from .common import fail

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add the ``config`` command group."""
    parser = subparsers.add_parser("config", help="show the effective config, check a file")
    sub = parser.add_subparsers(dest="config_command", metavar="ACTION", required=True)

    p = sub.add_parser(
        "show", help="print the effective config (file + environment + defaults), secrets redacted"
    )
    p.set_defaults(func=_show)

    p = sub.add_parser(
        "check",
        help="check a config file as a run would (no hardware opened); exit 1 with the error",
    )
    p.add_argument(
        "path",
        nargs="?",
        metavar="PATH",
        help="the file (default: --config, else $CLAWSEED_HOME/config.toml)",
    )
    p.set_defaults(func=_check)


def _show(args: argparse.Namespace) -> int:
    import msgspec

    from clawseed_edge.api import ConfigError
    from clawseed_edge.config.assembly import secret_scrubber
    from clawseed_edge.config.file import load_config
    from clawseed_edge.config.load import env_overrides
    from clawseed_edge.config.redaction import redact_document
    from clawseed_edge.config.toml_text import dumps

    try:
        loaded = load_config(getattr(args, "config", None))
        scrubber = secret_scrubber(loaded)
    except ConfigError as exc:
        return fail(str(exc))
    header = [f"# effective config: {loaded.source}, with defaults filled in"]
    overridden = sorted(env_overrides({}, os.environ)[1].values())
    if overridden:
        header.append("# overridden by " + ", ".join(overridden))
    # Redacted on the parsed form (credential keys, key shapes, passwords inside URLs), then
    # the text passes the scrubber too: the secrets' values are hidden wherever they appear.
    text = dumps(redact_document(msgspec.to_builtins(loaded.config), scrubber))
    sys.stdout.write(scrubber.scrub("\n".join(header) + "\n\n" + text))
    return 0


def _check(args: argparse.Namespace) -> int:
    import asyncio

    from clawseed_edge.api import ClawseedError
    from clawseed_edge.config.check import check_as_a_run
    from clawseed_edge.config.file import load_config
    from clawseed_edge.config.paths import default_config_path

    path = args.path or getattr(args, "config", None) or default_config_path()
    try:
        loaded = load_config(path)
        peripherals = asyncio.run(check_as_a_run(loaded))
        if loaded.config.automations:  # conditions, actions and the names they read
            from clawseed_edge.scheduler.automation_spec import known_names, validate_automations

            validate_automations(
                loaded.config.automations, loaded.source, known=known_names(peripherals)
            )
        gateway = loaded.config.gateway
        if gateway.enabled:  # `run` refuses this address before it opens anything
            from clawseed_edge.channels.gateway.server import check_bind

            check_bind(gateway.host, gateway.allow_public_bind)
    except ClawseedError as exc:
        return fail(str(exc))
    print(f"ok: {path}")
    return 0

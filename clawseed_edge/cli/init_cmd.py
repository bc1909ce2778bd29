"""``clawseed-edge init``: write a starter config, the workspace and a private secrets file."""

from __future__ import annotations

import argparse
import os
import sys
from importlib import resources
from typing import Any

__all__ = ["register"]

_SECRETS_TEMPLATE = """\
# API keys for remote providers, one NAME=value per line (this file stays mode 0600).
# ANTHROPIC_API_KEY=...
"""


def register(sub: Any) -> None:
    init = sub.add_parser(
        "init",
        help="write a starter config in $CLAWSEED_HOME",
        description="Create $CLAWSEED_HOME (default ~/.clawseed-edge) with config.toml, "
        "a workspace with SOUL.md, and an empty secrets file readable only by you.",
    )
    init.add_argument("--force", action="store_true", help="overwrite an existing config.toml")
    init.set_defaults(func=_init)


def _init(args: argparse.Namespace) -> int:
    from clawseed_edge.agent.prompt import ensure_workspace
    from clawseed_edge.config.paths import clawseed_home

    home = clawseed_home()
    config_path = (args.config and os.path.expanduser(args.config)) or str(home / "config.toml")
    if os.path.exists(config_path) and not args.force:
        print(
            f"error: {config_path} exists; edit it, or pass --force to replace it",
            file=sys.stderr,
        )
        return 1
    home.mkdir(parents=True, exist_ok=True)
    os.chmod(home, 0o700)
    text = resources.files("clawseed_edge.config").joinpath("starter.toml").read_text("utf-8")
    with open(config_path, "w", encoding="utf-8") as fh:
        fh.write(text)
    secrets = home / "secrets"
    if not secrets.exists():
        fd = os.open(secrets, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(_SECRETS_TEMPLATE)
    ensure_workspace(home / "workspace")
    print(f"wrote {config_path}")
    print(f"workspace: {home / 'workspace'} (edit SOUL.md to give the agent its character)")
    print(f"secrets:   {secrets} (mode 600)")
    print("next: `clawseed-edge chat --sim` to try it on simulated pins")
    return 0

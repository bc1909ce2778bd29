"""Where the user's files live: ``$CLAWSEED_HOME`` (default ``~/.clawseed-edge``)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["HOME_ENV", "clawseed_home", "default_config_path", "resolve_in_home"]

HOME_ENV = "CLAWSEED_HOME"


def clawseed_home(environ: Mapping[str, str] | None = None) -> Path:
    """The home directory: ``$CLAWSEED_HOME`` if set, else ``~/.clawseed-edge``.

    Under systemd the unit sets ``CLAWSEED_HOME=/var/lib/clawseed-edge``. Nothing is created
    here; callers that write create what they need.
    """
    env = os.environ if environ is None else environ
    value = env.get(HOME_ENV)
    if value:
        return Path(value).expanduser()
    return Path.home() / ".clawseed-edge"


def default_config_path(environ: Mapping[str, str] | None = None) -> Path:
    """``$CLAWSEED_HOME/config.toml``."""
    return clawseed_home(environ) / "config.toml"


def resolve_in_home(path: str | os.PathLike[str], home: Path) -> Path:
    """A path from config: ``~`` expanded, relative paths taken relative to ``home``."""
    p = Path(path).expanduser()
    return p if p.is_absolute() else home / p

"""Where the user's files live: ``$CLAWSEED_HOME`` (default ``~/.clawseed-edge``)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = [
    "HOME_ENV",
    "clawseed_home",
    "default_config_path",
    "resolve_in_home",
    "system_directory",
]

HOME_ENV = "CLAWSEED_HOME"

# Directories the agent must never write into: the tree and everything below it.
_SYSTEM_TREES = ("/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/boot", "/dev",
                 "/proc", "/sys", "/run")  # fmt: skip
# Directories that hold other people's data: refused themselves, their subdirectories are fine
# (the systemd home is /var/lib/clawseed-edge).
_SYSTEM_ROOTS = ("/", "/home", "/var", "/var/lib", "/opt", "/srv", "/mnt", "/media", "/tmp",
                 "/root")  # fmt: skip


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


def system_directory(path: str | os.PathLike[str]) -> str | None:
    """The system directory ``path`` is (or lies in), or None for an ordinary directory.

    ``/``, ``/etc`` and everything under it, ``/usr/...``, the user's own home directory itself:
    start-up writes ``SOUL.md`` and the file tools write into the workspace, so none of these
    can be one. Relative paths (taken under ``$CLAWSEED_HOME``) are never system directories.
    Symlinks are resolved (``/lib`` is ``/usr/lib`` on most systems).
    """
    p = Path(path).expanduser()
    if not p.is_absolute():
        return None
    real = os.path.realpath(p)
    for tree in _SYSTEM_TREES:
        if real == tree or real.startswith(tree + "/"):
            return tree
    if real in _SYSTEM_ROOTS or real == os.path.realpath(Path.home()):
        return real
    return None

"""The ``$CLAWSEED_HOME/secrets`` file: ``NAME=value`` lines, readable by its owner only.

API keys are looked up by the environment variable name the config gives (``api_key_env``):
the process environment first, then this file. The file must not be readable by group or
others (mode 0600); a wider mode is refused with the command that fixes it.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path

from clawseed_edge.api import ConfigInvalid

__all__ = ["lookup_secret", "read_secrets"]


def read_secrets(path: Path) -> dict[str, str]:
    """Parse the secrets file; a missing file is an empty mapping.

    Raises:
        ConfigInvalid: The file is group/world readable, or a line is not ``NAME=value``.
    """
    try:
        st = path.stat()
    except FileNotFoundError:
        return {}
    if st.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise ConfigInvalid(
            f"the secrets file is readable by others (mode {stat.S_IMODE(st.st_mode):o}); "
            f"run `chmod 600 {path}`",
            file=str(path),
        )
    values: dict[str, str] = {}
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        if text.startswith("export "):
            text = text[len("export ") :].lstrip()
        name, sep, value = text.partition("=")
        if not sep or not name.strip():
            raise ConfigInvalid(
                f"line {lineno} is not NAME=value (the value is not shown)", file=str(path)
            )
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        values[name.strip()] = value
    return values


def lookup_secret(
    name: str, secrets_path: Path, environ: Mapping[str, str] | None = None
) -> str | None:
    """The value of ``name`` from the environment, else from the secrets file, else None."""
    env = os.environ if environ is None else environ
    if env.get(name):
        return env[name]
    return read_secrets(secrets_path).get(name) or None

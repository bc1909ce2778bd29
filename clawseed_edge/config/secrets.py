"""The ``$CLAWSEED_HOME/secrets`` file: ``NAME=value`` lines, readable by its owner only.

API keys are looked up by the environment variable name the config gives (``api_key_env``):
the process environment first, then this file. The file must not be readable by group or
others (mode 0600); a wider mode is refused with the command that fixes it.
"""

from __future__ import annotations

import os
import re
import stat
import tempfile
from collections.abc import Mapping
from pathlib import Path

from clawseed_edge.api import ConfigInvalid

__all__ = ["check_secret_name", "lookup_secret", "read_secrets", "remove_secret", "set_secret"]

# Environment-variable style: the names are looked up as variables first (``api_key_env``).
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")


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


def check_secret_name(name: str) -> str:
    """Return ``name`` if it is an environment-variable style name.

    Raises:
        ConfigInvalid: The name is empty, too long or holds other characters than letters,
            digits and ``_`` (or starts with a digit).
    """
    if not _NAME.fullmatch(name):
        raise ConfigInvalid(
            f"{name!r} is not a valid secret name; use letters, digits and _ (not starting "
            "with a digit, at most 128 characters), e.g. ANTHROPIC_API_KEY"
        )
    return name


def set_secret(path: Path, name: str, value: str) -> None:
    """Add or replace ``name`` in the secrets file, creating it (mode 0600) if needed.

    The other lines, comments included, are kept. The new file is written beside the old one
    and renamed over it, so a crash leaves either the old or the new file, never half of one.

    Raises:
        ConfigInvalid: A bad name, a value that is empty or spans lines, or a secrets file
            that is readable by others or malformed.
    """
    check_secret_name(name)
    if not value:
        raise ConfigInvalid(f"the value of {name} is empty; give a value or remove the secret")
    if "\n" in value or "\r" in value or "\0" in value:
        raise ConfigInvalid(f"the value of {name} spans lines; a secret is one line")
    # Reading first checks the mode and the format: a refused file is not rewritten.
    read_secrets(path)
    # read_secrets strips blanks and one pair of quotes: quote a value they would change.
    if value != value.strip() or (value[0] == value[-1] and value[0] in "'\""):
        value = f'"{value}"'
    line = f"{name}={value}"
    lines = _lines(path)
    kept = [existing for existing in lines if _name_of(existing) != name]
    if len(kept) == len(lines):
        kept.append(line)
    else:  # keep the secret where it was in the file
        at = next(i for i, existing in enumerate(lines) if _name_of(existing) == name)
        kept.insert(at, line)
    _write_atomically(path, kept)


def remove_secret(path: Path, name: str) -> bool:
    """Remove ``name`` from the secrets file; returns False when it was not there.

    Raises:
        ConfigInvalid: A bad name, or a secrets file that is readable by others or malformed.
    """
    check_secret_name(name)
    if name not in read_secrets(path):
        return False
    _write_atomically(path, [line for line in _lines(path) if _name_of(line) != name])
    return True


def _lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []


def _name_of(line: str) -> str | None:
    """The name a ``NAME=value`` line sets (as :func:`read_secrets` reads it), else None."""
    text = line.strip()
    if not text or text.startswith("#"):
        return None
    if text.startswith("export "):
        text = text[len("export ") :].lstrip()
    name, sep, _ = text.partition("=")
    return name.strip() if sep else None


def _write_atomically(path: Path, lines: list[str]) -> None:
    """Write ``lines`` to a 0600 temporary file beside ``path`` and rename it over ``path``."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    # mkstemp creates the file 0600 from the start: the value is never readable by others.
    fd, tmp = tempfile.mkstemp(prefix=".secrets.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write("".join(f"{line}\n" for line in lines))
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise

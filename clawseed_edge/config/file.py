"""Finding and loading the config file: an explicit path, ``$CLAWSEED_HOME/config.toml``, or
the embedded default (simulated board, SQLite memory, offline demo model)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from .hardware import check_hardware
from .load import apply_env_overrides, convert_config, read_toml
from .paths import clawseed_home, default_config_path
from .schema import Config

__all__ = ["EMBEDDED_DEFAULT", "LoadedConfig", "embedded_default_text", "load_config"]

#: The source name of the embedded default config.
EMBEDDED_DEFAULT = "<embedded default>"


@dataclass(frozen=True, slots=True)
class LoadedConfig:
    """A validated config and where it came from.

    Attributes:
        config: The typed config.
        source: The file it was read from, or ``<embedded default>``.
        home: ``$CLAWSEED_HOME``: where memory, the workspace and secrets live.
        embedded: True when no config file exists and the embedded default is used.
    """

    config: Config
    source: str
    home: Path
    embedded: bool = False


def load_config(
    path: str | Path | None = None, *, environ: Mapping[str, str] | None = None
) -> LoadedConfig:
    """Load the config.

    With ``path``, that file must exist. Without it, ``$CLAWSEED_HOME/config.toml`` is read
    if it exists, else the embedded default is used (callers say so to the user).
    ``CLAWSEED__SECTION__KEY`` environment overrides apply in every case.

    Raises:
        ConfigFileNotFound: ``path`` was given and does not exist.
        ConfigInvalid: The file is not valid TOML or does not fit the schema (names the key),
            or its hardware does not add up (:func:`~.hardware.check_hardware`).
    """
    home = clawseed_home(environ)
    if path is not None:
        file = Path(path).expanduser()
        data = read_toml(file)
        embedded = False
    else:
        file = default_config_path(environ)
        data = read_toml(file, missing_ok=True)
        embedded = not file.exists()
        if embedded:
            data = _embedded_default_data()
    source = EMBEDDED_DEFAULT if embedded else str(file)
    config = convert_config(apply_env_overrides(data, environ), Config, source=source)
    check_hardware(config, source)
    return LoadedConfig(config=config, source=source, home=home, embedded=embedded)


def embedded_default_text() -> str:
    """The TOML text of the embedded default config."""
    return resources.files("clawseed_edge.config").joinpath("default.toml").read_text("utf-8")


def _embedded_default_data() -> dict[str, object]:
    import tomllib

    return tomllib.loads(embedded_default_text())

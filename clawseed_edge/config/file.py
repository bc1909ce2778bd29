"""Finding and loading the config file: an explicit path, ``$CLAWSEED_HOME/config.toml``, or
the embedded default (simulated board, SQLite memory, offline demo model)."""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from .hardware import check_hardware
from .load import convert_config, env_overrides, read_toml, set_key
from .paths import clawseed_home, default_config_path
from .schema import Config

if TYPE_CHECKING:
    from clawseed_edge.peripherals.registry import PeripheralTable

__all__ = ["EMBEDDED_DEFAULT", "LoadedConfig", "embedded_default_text", "load_config"]

#: The source name of the embedded default config.
EMBEDDED_DEFAULT = "<embedded default>"


class LoadedConfig(msgspec.Struct, frozen=True):
    """A validated config and where it came from.

    Attributes:
        config: The typed config.
        source: The file it was read from, or ``<embedded default>``.
        home: ``$CLAWSEED_HOME``: where memory, the workspace and secrets live.
        embedded: True when no config file exists and the embedded default is used.
        peripheral_tables: The ``[[peripherals]]`` tables, each validated once by its
            factory at load; assembly builds from these. None for a LoadedConfig made by hand
            (assembly then checks the hardware itself).
    """

    config: Config
    source: str
    home: Path
    embedded: bool = False
    peripheral_tables: tuple[PeripheralTable, ...] | None = None


def load_config(
    path: str | Path | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, object] | None = None,
) -> LoadedConfig:
    """Load the config.

    With ``path``, that file must exist. Without it, ``$CLAWSEED_HOME/config.toml`` is read
    if it exists, else the embedded default is used (callers say so to the user).
    ``CLAWSEED__SECTION__KEY`` environment overrides apply in every case, then ``overrides``.

    Args:
        path: The config file, or None for the default.
        environ: The environment (default ``os.environ``).
        overrides: Dotted keys set on the command line (``{"provider.name": "anthropic"}``),
            applied last. Naming another provider than the configured one drops the old
            provider's server settings (``model``, ``base_url``, keys), so the new one gets its
            own defaults; fallbacks, routes, timeouts and retries are kept.

    Raises:
        ConfigFileNotFound: ``path`` was given and does not exist.
        ConfigInvalid: The file is not valid TOML or does not fit the schema (names the key, and
            the environment variable when one set the value), or its hardware does not add up
            (:func:`~.hardware.check_hardware`).
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
    data, origins = env_overrides(data, environ)
    for key, value in (overrides or {}).items():
        if key == "provider.name":
            _switch_provider(data, str(value))
        set_key(data, key, value)
        origins[key] = "the command line"
    config = convert_config(data, Config, source=source, origins=origins)
    _check_board(config, source, origins)
    tables = check_hardware(config, source)
    return LoadedConfig(
        config=config,
        source=source,
        home=home,
        embedded=embedded,
        peripheral_tables=tuple(tables),
    )


# The settings that belong to one model server; they do not carry over to another provider.
_SERVER_KEYS = (
    "model",
    "base_url",
    "api_key_env",
    "api_key",
    "keep_alive",
    "num_ctx",
    "think",
    "settings",
)


def _switch_provider(data: dict[str, object], name: str) -> None:
    table = data.get("provider")
    if not isinstance(table, dict) or table.get("name", "ollama") == name:
        return
    for key in _SERVER_KEYS:
        table.pop(key, None)


def _check_board(config: Config, source: str, origins: Mapping[str, str]) -> None:
    """Name the file and key for an unknown ``[hardware] board`` (not only when devices exist)."""
    from clawseed_edge.api import ConfigInvalid
    from clawseed_edge.peripherals import default_registry

    board = config.hardware.board
    if board is None:  # check_hardware says when it is needed
        return
    known = default_registry().ids()
    if board not in known:
        raise ConfigInvalid(
            f"unknown board {board!r}; allowed values: {', '.join(known)} "
            "(`clawseed-edge boards list` describes them)",
            file=origins.get("hardware.board", source),
            key="hardware.board",
        )


def embedded_default_text() -> str:
    """The TOML text of the embedded default config."""
    return resources.files("clawseed_edge.config").joinpath("default.toml").read_text("utf-8")


def _embedded_default_data() -> dict[str, object]:
    import tomllib

    return tomllib.loads(embedded_default_text())

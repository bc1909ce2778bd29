"""The Pi header's config: ``[hardware]`` (board, pin factory) and top-level ``[[devices]]``.

The config layer embeds these Structs: ``board`` and ``pin_factory`` under ``[hardware]``,
devices as top-level ``[[devices]]`` tables (the same :class:`~..wired.DeviceConfig` as on every
backend)::

    [hardware]
    board = "rpi4b"
    [[devices]]
    name = "red_led"
    pin = "GPIO17"
    kind = "led"
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import msgspec

from clawseed_edge.api import ConfigInvalid

from ..wired.config import KINDS, Wiring

__all__ = ["HardwareConfig", "load_hardware_toml", "loads_hardware_toml", "parse_hardware"]


class HardwareConfig(Wiring, forbid_unknown_fields=True, kw_only=True, frozen=True):
    """The Pi header's part of the config: a :class:`~..wired.Wiring` plus its pin factory.

    Attributes:
        board: A board id from the registry (``rpi4b``; ``sim`` for simulation).
        pin_factory: ``auto`` (lgpio on hardware, mock with ``--sim``), ``lgpio`` or ``mock``.
        devices: The wiring.
    """

    pin_factory: Literal["auto", "lgpio", "mock"] = "auto"


def parse_hardware(
    data: Mapping[str, Any], source: str = "config.toml", *, defaults: HardwareConfig | None = None
) -> HardwareConfig:
    """Build a :class:`HardwareConfig` from a decoded TOML document.

    Reads ``[hardware]`` (``board``, ``pin_factory``) and the top-level ``[[devices]]``; other
    top-level tables are ignored (they belong to other sections of the config).

    Raises:
        ConfigInvalid: A key is unknown or of the wrong type; names the file and the key.
    """
    base = defaults or HardwareConfig()
    section = data.get("hardware", {})
    if not isinstance(section, Mapping):
        raise ConfigInvalid("[hardware] must be a table", file=source, key="hardware")
    raw: dict[str, Any] = {"board": base.board, "pin_factory": base.pin_factory}
    raw.update(section)
    if "devices" in section:
        raise ConfigInvalid(
            "devices are top-level [[devices]] tables, not inside [hardware]",
            file=source,
            key="hardware.devices",
        )
    raw["devices"] = data.get("devices", [])
    try:
        return msgspec.convert(raw, HardwareConfig)
    except msgspec.ValidationError as exc:
        message, key = _explain(exc)
        if not key.startswith("devices"):
            key = f"hardware.{key}" if key else "hardware"
        raise ConfigInvalid(message, file=source, key=key) from exc


def _explain(exc: msgspec.ValidationError) -> tuple[str, str]:
    """(message, dotted key) from msgspec's ``"... - at `$.devices[0]`"`` text."""
    text = str(exc)
    message, _, key = text.partition(" - at `$")
    key = key.rstrip("`").lstrip(".")
    if message.startswith("Object contains unknown field `"):
        field = message.split("`")[1]
        key = f"{key}.{field}" if key else field
        message = f"unknown key {field!r} (check the spelling; see docs/hardware.md)"
    elif message.startswith("Invalid enum value") and key.endswith(".kind"):
        message = f"{message}; a kind is one of: {', '.join(KINDS)}"
    elif message.startswith("Invalid enum value") and key.endswith("pin_factory"):
        message = f"{message}; expected auto, lgpio or mock"
    return message, key


def load_hardware_toml(path: str | Path) -> HardwareConfig:
    """Read ``[hardware]`` and ``[[devices]]`` from a TOML file.

    Raises:
        ConfigInvalid: Unreadable file, bad TOML or a schema error (names the file and key).
    """
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigInvalid(f"cannot read the devices file: {exc.strerror}", file=source) from exc
    return loads_hardware_toml(text, source)


def loads_hardware_toml(text: str, source: str = "<devices>") -> HardwareConfig:
    """Like :func:`load_hardware_toml`, from a string (snippets in tests)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigInvalid(f"not valid TOML: {exc}", file=source) from exc
    return parse_hardware(data, source)

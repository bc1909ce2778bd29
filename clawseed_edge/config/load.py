"""Reading a TOML config file into typed msgspec Structs, with errors that name file and key.

The rules:

* a missing file is :class:`~clawseed_edge.api.ConfigFileNotFound` naming the path and how to
  create one (``clawseed-edge init``), unless the caller allows a missing file (defaults);
* a TOML syntax error names the file, the line and the column;
* an unknown key names the key path and lists the keys allowed there;
* a wrong type names the key path and the expected type;
* environment overrides ``CLAWSEED__SECTION__KEY=value`` (double underscores between path
  parts, value parsed as a TOML value when it is one, else a string) apply before validation.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from clawseed_edge.api import ConfigFileNotFound, ConfigInvalid

__all__ = ["ENV_PREFIX", "apply_env_overrides", "convert_config", "read_toml"]

T = TypeVar("T")

ENV_PREFIX = "CLAWSEED__"
_AT_PATH = re.compile(r"\s*-\s*at\s*`\$(?P<path>[^`]*)`\s*$")
_UNKNOWN = re.compile(r"Object contains unknown field `(?P<field>[^`]+)`")
_EXPECTED = re.compile(r"Expected `(?P<exp>[^`]+)`, got `(?P<got>[^`]+)`")
_MISSING = re.compile(r"Object missing required field `(?P<field>[^`]+)`")


def read_toml(path: Path, *, missing_ok: bool = False) -> dict[str, Any]:
    """Parse a TOML file into a dict.

    Raises:
        ConfigFileNotFound: The file does not exist (and ``missing_ok`` is false).
        ConfigInvalid: The file is not valid TOML or cannot be read; names line and column.
    """
    try:
        raw = path.read_bytes()
    except FileNotFoundError as exc:
        if missing_ok:
            return {}
        raise ConfigFileNotFound(
            f"{path}: no such config file; create one with `clawseed-edge init` "
            f"or pass --config PATH"
        ) from exc
    except OSError as exc:
        raise ConfigInvalid(f"cannot read the file: {exc.strerror}", file=str(path)) from exc
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigInvalid("the file is not UTF-8 text", file=str(path)) from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigInvalid(f"not valid TOML: {exc}", file=str(path)) from exc


def apply_env_overrides(
    data: dict[str, Any], environ: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """Apply ``CLAWSEED__A__B=value`` overrides onto ``data`` (a new dict is returned).

    Only table keys can be set (not array elements). The value is parsed as TOML when it is
    a valid TOML value (``3``, ``true``, ``"x"``, ``[1, 2]``), else taken as a string.
    """
    env = os.environ if environ is None else environ
    out = _deep_copy(data)
    for name, raw in sorted(env.items()):
        if not name.startswith(ENV_PREFIX):
            continue
        parts = [p.lower() for p in name[len(ENV_PREFIX) :].split("__") if p]
        if not parts:
            continue
        node = out
        for part in parts[:-1]:
            child = node.get(part)
            if not isinstance(child, dict):
                child = {}
                node[part] = child
            node = child
        node[parts[-1]] = _parse_env_value(raw)
    return out


def convert_config(data: Mapping[str, Any], schema: type[T], *, source: str | None) -> T:
    """Validate ``data`` into ``schema`` (a msgspec Struct type).

    Raises:
        ConfigInvalid: With the file, the dotted key path and what is expected there.
    """
    try:
        return msgspec.convert(data, schema, strict=False)
    except msgspec.ValidationError as exc:
        raise _translate(str(exc), schema, source) from exc


# --- internals --------------------------------------------------------------------------------


def _parse_env_value(raw: str) -> Any:
    try:
        return tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        return raw


def _deep_copy(data: Mapping[str, Any]) -> dict[str, Any]:
    return {k: _deep_copy(v) if isinstance(v, Mapping) else v for k, v in data.items()}


def _translate(message: str, schema: type[Any], source: str | None) -> ConfigInvalid:
    path = ""
    m = _AT_PATH.search(message)
    if m:
        path = m.group("path")
        message = message[: m.start()]
    key = _dotted(path)
    if um := _UNKNOWN.search(message):
        field = um.group("field")
        full = f"{key}.{field}" if key else field
        allowed = _fields_at(schema, path)
        hint = f"; allowed keys here: {', '.join(allowed)}" if allowed else ""
        return ConfigInvalid(f"unknown key{hint}", file=source, key=full)
    if mm := _MISSING.search(message):
        field = mm.group("field")
        full = f"{key}.{field}" if key else field
        return ConfigInvalid("required key is missing", file=source, key=full)
    if em := _EXPECTED.search(message):
        return ConfigInvalid(
            f"expected {em.group('exp')}, got {em.group('got')}", file=source, key=key or None
        )
    return ConfigInvalid(message.strip() or "invalid value", file=source, key=key or None)


def _dotted(path: str) -> str:
    """``.devices[1].pin`` -> ``devices[1].pin``."""
    return path[1:] if path.startswith(".") else path


def _fields_at(schema: type[Any], path: str) -> list[str]:
    """The field names of the Struct reached by following ``path`` from ``schema``."""
    tp: Any = _unwrap(schema)
    for name, index in re.findall(r"\.([^.\[]+)|\[(\d+)\]", path):
        if name:
            fields = {f.encode_name: f.type for f in getattr(tp, "fields", ())}
            if name not in fields:
                return []
            tp = _unwrap(fields[name])
        elif index:
            item = getattr(tp, "item_type", None)
            if item is None:
                return []
            tp = _unwrap(item)
    return sorted(f.encode_name for f in getattr(tp, "fields", ()))


def _unwrap(tp: Any) -> Any:
    """Turn a Python type into a msgspec.inspect type, unwrapping Optional."""
    if not isinstance(tp, msgspec.inspect.Type):
        tp = msgspec.inspect.type_info(tp)
    if isinstance(tp, msgspec.inspect.UnionType):
        rest = [t for t in tp.types if not isinstance(t, msgspec.inspect.NoneType)]
        if len(rest) == 1:
            tp = rest[0]
    return tp

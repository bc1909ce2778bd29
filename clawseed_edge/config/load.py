"""Reading a TOML config file into typed msgspec Structs, with errors that name file and key.

The rules:

* a missing file is :class:`~clawseed_edge.api.ConfigFileNotFound` naming the path and how to
  create one (``clawseed-edge init``), unless the caller allows a missing file (defaults);
* a TOML syntax error names the file, the line and the column;
* an unknown key names the key path and lists the keys allowed there;
* a wrong type names the key path and the expected type: conversion is strict, so
  ``max_history = "10"`` or ``approval = "false"`` is an error, not silently converted;
* a value outside its range names the key, the bound and the value; a value outside a fixed set
  of choices lists the allowed values; NaN and infinity are refused everywhere;
* environment overrides ``CLAWSEED__SECTION__KEY=value`` (double underscores between path
  parts, value parsed as a TOML value when it is one, else a string) apply before validation,
  and an error in a value they set (or a key they misspell) names the variable, not the file.
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from clawseed_edge.api import ConfigFileNotFound, ConfigInvalid

__all__ = [
    "ENV_PREFIX",
    "apply_env_overrides",
    "convert_config",
    "env_overrides",
    "parse_toml",
    "read_toml",
]

T = TypeVar("T")

ENV_PREFIX = "CLAWSEED__"
#: How deep arrays and inline tables may nest in a config file.
MAX_NESTING = 32
# Patterns of msgspec's messages, compiled (and cached by ``re``) at the first invalid config,
# not at every start: seven compiles were about 2 ms of each command's start-up.
_AT_PATH = r"\s*-\s*at\s*`\$(?P<path>[^`]*)`\s*$"
_UNKNOWN = r"Object contains unknown field `(?P<field>[^`]+)`"
_EXPECTED = r"Expected `(?P<exp>[^`]+)`, got `(?P<got>[^`]+)`"
_MISSING = r"Object missing required field `(?P<field>[^`]+)`"
_BOUND = r"Expected `(?P<exp>[^`]+)` (?P<op>>=|<=|>|<) (?P<bound>\S+)\s*$"
_ENUM = r"Invalid enum value (?P<value>.+?)\s*$"
# A __post_init__ message that starts with the field it is about ("workspace_dir: ...",
# "memory.retention_days = -1 ...", "timeout_s must be ..."): the key gets that field.
_LEADING_FIELD = r"^(?:[a-z_]+\.)?(?P<field>[a-z_]+)(?P<colon>:\s*)?(?=[\s:=]|$)"


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
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigInvalid("the file is not UTF-8 text", file=str(path)) from exc
    return parse_toml(text, source=str(path))


def parse_toml(text: str, *, source: str | None = None) -> dict[str, Any]:
    """Parse TOML text into a dict, refusing documents nested deeper than :data:`MAX_NESTING`.

    Raises:
        ConfigInvalid: Not valid TOML (names line and column), or nested too deeply (a config
            is a few levels deep; 20,000 ``[`` would otherwise be a RecursionError).
    """
    depth = _bracket_depth(text)
    if depth > MAX_NESTING:
        raise ConfigInvalid(
            f"arrays or inline tables nested {depth} deep (at most {MAX_NESTING}); "
            "a config is a few levels deep: check the brackets",
            file=source,
        )
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigInvalid(f"not valid TOML: {exc}", file=source) from exc
    except RecursionError:  # nesting hidden from the bracket count (it skips strings)
        raise ConfigInvalid(
            f"nested too deeply (at most {MAX_NESTING} levels)", file=source
        ) from None


def _bracket_depth(text: str) -> int:
    """The deepest nesting of ``[``/``{`` outside strings and comments (a linear scan)."""
    depth = deepest = 0
    quote = ""
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if quote:
            if quote == '"' and ch == "\\":
                i += 2
                continue
            if ch == quote:
                quote = ""
        elif text.startswith(('"""', "'''"), i):  # a multi-line string: skip to its end
            end = text.find(text[i : i + 3], i + 3)
            i = n if end < 0 else end + 3
            continue
        elif ch in "\"'":
            quote = ch
        elif ch == "#":
            newline = text.find("\n", i)
            i = n if newline < 0 else newline
            continue
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth = max(0, depth - 1)
        elif ch == "\n" and depth == 0:
            quote = ""
        i += 1
    return deepest


def apply_env_overrides(
    data: dict[str, Any], environ: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """Apply ``CLAWSEED__A__B=value`` overrides onto ``data`` (a new dict is returned).

    Only table keys can be set (not array elements). The value is parsed as TOML when it is
    a valid TOML value (``3``, ``true``, ``"x"``, ``[1, 2]``), else taken as a string.
    """
    return env_overrides(data, environ)[0]


def env_overrides(
    data: Mapping[str, Any], environ: Mapping[str, str] | None = None
) -> tuple[dict[str, Any], dict[str, str]]:
    """Like :func:`apply_env_overrides`, also returning which variable set which key.

    Returns:
        The new data, and ``{dotted key: label}`` (``"autonomy.level": "environment variable
        CLAWSEED__AUTONOMY__LEVEL"``) for :func:`convert_config` to blame the right source.
    """
    env = os.environ if environ is None else environ
    out = _deep_copy(data)
    origins: dict[str, str] = {}
    for name, raw in sorted(env.items()):
        if not name.startswith(ENV_PREFIX):
            continue
        parts = [p.lower() for p in name[len(ENV_PREFIX) :].split("__") if p]
        if not parts:
            continue
        _refuse_non_table(out, parts, name)
        set_key(out, ".".join(parts), _parse_env_value(raw))
        origins[".".join(parts)] = f"environment variable {name}"
    return out, origins


def _refuse_non_table(data: Mapping[str, Any], parts: list[str], name: str) -> None:
    """A variable reaches only into tables: replacing ``[[devices]]`` by a table would lose the
    file's devices and blame the file for the mismatch."""
    node: Any = data
    for depth, part in enumerate(parts[:-1], start=1):
        node = node.get(part) if isinstance(node, Mapping) else None
        if node is None:
            return
        if not isinstance(node, Mapping):
            raise ConfigInvalid(
                "environment variables set keys of tables only, and this is not a table in "
                "the file (an array such as [[devices]] is set in the file)",
                file=f"environment variable {name}",
                key=".".join(parts[:depth]),
            )


def set_key(data: dict[str, Any], dotted: str, value: Any) -> None:
    """Set ``data[a][b] = value`` for ``dotted = "a.b"``, creating (or replacing) tables."""
    parts = dotted.split(".")
    node = data
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = {}
            node[part] = child
        node = child
    node[parts[-1]] = value


def convert_config(
    data: Mapping[str, Any],
    schema: type[T],
    *,
    source: str | None,
    origins: Mapping[str, str] | None = None,
) -> T:
    """Validate ``data`` into ``schema`` (a msgspec Struct type), strictly (no coercion).

    Args:
        data: The decoded TOML (overrides applied).
        schema: The Struct type.
        source: The file, for error messages.
        origins: Keys set elsewhere than the file (from :func:`env_overrides`): an error at
            such a key names that source instead of the file.

    Raises:
        ConfigInvalid: With the file (or variable), the dotted key path and what is expected.
    """
    _check_finite(data, "", source, origins or {})
    if isinstance(data.get("sensors"), list):
        from clawseed_edge.peripherals.sensors.config import gather_quantity_filters

        # ``filters_<quantity>`` keys are open-ended; they become ``quantity_filters``.
        data = {**data, "sensors": [gather_quantity_filters(e) for e in data["sensors"]]}
    channels = data.get("channels")
    if isinstance(channels, dict) and any(k not in _BUILT_IN_CHANNELS for k in channels):
        # A [channels.<name>] table that is not a built-in's belongs to a plugin channel.
        plugins = {k: v for k, v in channels.items() if k not in _BUILT_IN_CHANNELS}
        kept = {k: v for k, v in channels.items() if k in _BUILT_IN_CHANNELS}
        data = {**data, "channels": {**kept, "plugins": plugins}}
    try:
        return msgspec.convert(data, schema, strict=True)
    except msgspec.ValidationError as exc:
        raise _translate(str(exc), schema, source, data, origins or {}) from exc


# --- internals --------------------------------------------------------------------------------

#: The keys of ``[channels]`` that are not a plugin channel's table.
_BUILT_IN_CHANNELS = ("telegram", "plugins")


def _parse_env_value(raw: str) -> Any:
    try:
        return tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        return raw


def _deep_copy(data: Mapping[str, Any]) -> dict[str, Any]:
    return {k: _deep_copy(v) if isinstance(v, Mapping) else v for k, v in data.items()}


def _check_finite(data: Any, key: str, source: str | None, origins: Mapping[str, str]) -> None:
    """Refuse NaN and infinity anywhere: every comparison with NaN is false, so a range check
    downstream would let it through."""
    if isinstance(data, float) and not math.isfinite(data):
        raise ConfigInvalid(
            f"must be a finite number, got {data}", file=_blame(key, source, origins), key=key
        )
    if isinstance(data, Mapping):
        for name, value in data.items():
            _check_finite(value, f"{key}.{name}" if key else str(name), source, origins)
    elif isinstance(data, list | tuple):
        for i, value in enumerate(data):
            _check_finite(value, f"{key}[{i}]", source, origins)


def _blame(
    key: str, source: str | None, origins: Mapping[str, str], *, unknown: bool = False
) -> str | None:
    """The file, or the override that set ``key`` (or, for an unknown key, a key below it)."""
    for set_key_, label in origins.items():
        if key == set_key_ or key.startswith((f"{set_key_}.", f"{set_key_}[")):
            return label
        if unknown and set_key_.startswith(f"{key}."):
            return label
    return source


def _translate(
    message: str,
    schema: type[Any],
    source: str | None,
    data: Mapping[str, Any],
    origins: Mapping[str, str],
) -> ConfigInvalid:
    path = ""
    m = re.search(_AT_PATH, message)
    if m:
        path = m.group("path")
        message = message[: m.start()]
    key = _dotted(path)
    if um := re.search(_UNKNOWN, message):
        field = um.group("field")
        full = f"{key}.{field}" if key else field
        allowed = _fields_at(schema, path)
        hint = f"; allowed keys here: {', '.join(allowed)}" if allowed else ""
        where = _blame(full, source, origins, unknown=True)
        return ConfigInvalid(f"unknown key{hint}", file=where, key=full)
    if mm := re.search(_MISSING, message):
        field = mm.group("field")
        full = f"{key}.{field}" if key else field
        return ConfigInvalid("required key is missing", file=source, key=full)
    where = _blame(key, source, origins)
    if bm := re.search(_BOUND, message):
        got = _value_at(data, path)
        return ConfigInvalid(
            f"must be {bm.group('op')} {bm.group('bound')}, got {got!r}",
            file=where,
            key=key or None,
        )
    if em := re.search(_EXPECTED, message):
        return ConfigInvalid(
            f"expected {em.group('exp')}, got {em.group('got')}", file=where, key=key or None
        )
    if nm := re.search(_ENUM, message):
        choices = _literal_values(schema, path)
        hint = f"; allowed values: {', '.join(map(str, choices))}" if choices else ""
        return ConfigInvalid(
            f"{nm.group('value')} is not allowed{hint}", file=where, key=key or None
        )
    text = message.strip()
    if lm := re.match(_LEADING_FIELD, text):
        if lm.group("field") in _fields_at(schema, path):
            key = f"{key}.{lm.group('field')}" if key else lm.group("field")
            where = _blame(key, source, origins)
            if lm.group("colon"):
                text = text[lm.end() :].strip()
    return ConfigInvalid(text or "invalid value", file=where, key=key or None)


def _value_at(data: Any, path: str) -> Any:
    """The raw value at a msgspec path (``.devices[0].pin``), or None."""
    node = data
    for name, index in re.findall(r"\.([^.\[]+)|\[(\d+)\]", path):
        try:
            node = node[name] if name else node[int(index)]
        except (KeyError, IndexError, TypeError):
            return None
    return node


def _dotted(path: str) -> str:
    """``.devices[1].pin`` -> ``devices[1].pin``."""
    return path[1:] if path.startswith(".") else path


def _type_at(schema: type[Any], path: str) -> Any:
    """The msgspec.inspect type reached by following ``path`` from ``schema`` (None if lost)."""
    tp: Any = _unwrap(schema)
    for name, index in re.findall(r"\.([^.\[]+)|\[(\d+)\]", path):
        if name:
            fields = {f.encode_name: f.type for f in getattr(tp, "fields", ())}
            if name not in fields:
                return None
            tp = _unwrap(fields[name])
        elif index:
            item = getattr(tp, "item_type", None)
            if item is None:
                return None
            tp = _unwrap(item)
    return tp


def _fields_at(schema: type[Any], path: str) -> list[str]:
    """The field names of the Struct reached by following ``path`` from ``schema``."""
    return sorted(f.encode_name for f in getattr(_type_at(schema, path), "fields", ()))


def _literal_values(schema: type[Any], path: str) -> tuple[Any, ...]:
    """The allowed values of the Literal field at ``path`` (also inside a union)."""
    tp = _type_at(schema, path)
    if isinstance(tp, msgspec.inspect.LiteralType):
        return tuple(tp.values)
    values: list[Any] = []
    for member in getattr(tp, "types", ()):
        if isinstance(member, msgspec.inspect.LiteralType):
            values.extend(member.values)
    return tuple(values)


def _unwrap(tp: Any) -> Any:
    """Turn a Python type into a msgspec.inspect type, unwrapping Optional."""
    if not isinstance(tp, msgspec.inspect.Type):
        tp = msgspec.inspect.type_info(tp)
    if isinstance(tp, msgspec.inspect.UnionType):
        rest = [t for t in tp.types if not isinstance(t, msgspec.inspect.NoneType)]
        if len(rest) == 1:
            tp = rest[0]
    return tp

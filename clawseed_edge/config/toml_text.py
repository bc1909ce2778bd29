"""Writing plain data (the output of ``msgspec.to_builtins``) as TOML text.

tomllib reads TOML but the standard library has no writer, and the data here is small and
plain (tables, arrays of tables, strings, numbers, booleans, lists), so a few lines do instead
of a dependency. TOML has no null: a ``None`` value becomes a comment saying the key is unset.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["dumps", "value_text"]

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def dumps(data: Mapping[str, Any]) -> str:
    """``data`` as a TOML document that ``tomllib.loads`` reads back to the same data.

    Raises:
        TypeError: A value is not a str, int, float, bool, None, list or mapping.
    """
    lines: list[str] = []
    _table(lines, [], data)
    return "\n".join(lines).strip("\n") + "\n"


def _table(lines: list[str], path: list[str], data: Mapping[str, Any]) -> None:
    # TOML needs a table's own keys before its sub-tables: plain values first.
    for key, value in data.items():
        if value is None:
            lines.append(f"# {_key(key)} is unset")
        elif not isinstance(value, Mapping) and not _is_table_array(value):
            lines.append(f"{_key(key)} = {_value(value)}")
    for key, value in data.items():
        if isinstance(value, Mapping):
            lines.extend(["", f"[{_dotted([*path, key])}]"])
            _table(lines, [*path, key], value)
        elif _is_table_array(value):
            for item in value:
                lines.extend(["", f"[[{_dotted([*path, key])}]]"])
                _table(lines, [*path, key], item)


def _is_table_array(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, Mapping) for v in value)


def _dotted(path: list[str]) -> str:
    return ".".join(_key(p) for p in path)


def _key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else json.dumps(key, ensure_ascii=False)


def value_text(value: Any) -> str:
    """One value as TOML writes it inline (``"x"``, ``[1, 2]``, ``{ a = 1 }``, ``{}``).

    Raises:
        TypeError: The value is not a str, int, float, bool, list or mapping.
    """
    return _value(value)


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        # A JSON string is a TOML basic string (both escape with \" \\ \n \uXXXX).
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        items = [f"{_key(k)} = {_value(v)}" for k, v in value.items() if v is not None]
        return "{ " + ", ".join(items) + " }" if items else "{}"
    raise TypeError(f"cannot write a {type(value).__name__} as TOML")

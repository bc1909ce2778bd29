"""Errors say the truth: every config key a message names exists in the config schema.

A message that tells the user to edit ``[autonomy].allowed_commands`` when the key is
``shell_allowlist`` sends them to write a key the loader then rejects. This reads every string
literal in the package (messages, help texts, docstrings) for config references:

- ``[section].key`` and ``[[section]].key``, always a reference;
- ``[section] key`` followed by `` =`` or `` to`` (``set [hardware] board to ...``,
  ``([memory] backend = none)``); other words after a bare ``[section]`` are prose
  (``[hardware] must be a table``).

Each is resolved against :class:`clawseed_edge.config.schema.Config` (nested tables and arrays
of tables included).
"""

from __future__ import annotations

import ast
import re
import types
import typing
from pathlib import Path
from typing import Any

import msgspec
import pytest

import clawseed_edge
from clawseed_edge.config.schema import Config

ROOT = Path(clawseed_edge.__file__).parent

_SECTION = r"(?<![\w\]])\[\[?(?P<section>[a-z_]+(?:\.[a-z_]+)*)\]\]?"
_DOTTED = re.compile(_SECTION + r"\.(?P<key>[a-z_]+)")
_SPACED = re.compile(_SECTION + r" (?P<key>[a-z_]+)(?= =| to\b)")


def named_keys(text: str) -> list[str]:
    """The config keys ``text`` names, as ``section.key`` paths."""
    found = [f"{m['section']}.{m['key']}" for m in _DOTTED.finditer(text)]
    found += [f"{m['section']}.{m['key']}" for m in _SPACED.finditer(text)]
    return found


def _struct_of(tp: Any) -> type[msgspec.Struct] | None:
    """The Struct behind a field type (through ``X | None``, ``list[X]``, ``tuple[X, ...]``)."""
    if isinstance(tp, type) and issubclass(tp, msgspec.Struct):
        return tp
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType, list, tuple):
        for arg in typing.get_args(tp):
            found = _struct_of(arg)
            if found is not None:
                return found
    return None


def key_exists(path: str, schema: type[msgspec.Struct] = Config) -> bool:
    struct: type[msgspec.Struct] | None = schema
    for part in path.split("."):
        if struct is None or part not in struct.__struct_fields__:
            return False
        struct = _struct_of(typing.get_type_hints(struct)[part])
    return True


def _string_literals(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]


def unknown_keys_in_package(root: Path) -> list[str]:
    found = []
    for path in sorted(root.rglob("*.py")):
        for line, text in _string_literals(path):
            for key in named_keys(text):
                if not key_exists(key):
                    found.append(f"{path.relative_to(root)}:{line}: [{key}] is not a config key")
    return found


def test_every_config_key_named_in_a_message_exists() -> None:
    assert unknown_keys_in_package(ROOT) == []


def test_the_scan_finds_the_references_the_package_makes() -> None:
    # A scan that finds nothing passes everything: it must see the real references.
    texts = [text for path in ROOT.rglob("*.py") for _, text in _string_literals(path)]
    keys = {key for text in texts for key in named_keys(text)}
    assert {"autonomy.shell_allowlist", "autonomy.forbidden_paths", "memory.backend"} <= keys


@pytest.mark.parametrize(
    ("text", "keys"),
    [
        ("add it to [autonomy].allowed_commands", ["autonomy.allowed_commands"]),
        ("set [hardware] board to rpi4b", ["hardware.board"]),
        ("([memory] backend = none)", ["memory.backend"]),
        ("[hardware] must be a table", []),
        ("no [embedding] provider configured", []),
        ("each [[provider.fallbacks]].name", ["provider.fallbacks.name"]),
        ("xs[i].role", []),
    ],
)
def test_references_are_read_from_text(text: str, keys: list[str]) -> None:
    assert named_keys(text) == keys


@pytest.mark.parametrize(
    ("path", "exists"),
    [
        ("autonomy.shell_allowlist", True),
        ("autonomy.allowed_commands", False),
        ("provider.fallbacks.model", True),
        ("devices.pin", True),
        ("hooks.options", True),
        ("hooks.level", False),
        ("nowhere.key", False),
    ],
)
def test_keys_are_resolved_against_the_schema(path: str, exists: bool) -> None:
    assert key_exists(path) is exists


def test_a_planted_wrong_key_is_reported(tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_text('MSG = "add it to [autonomy].allowed_commands"\n')
    assert unknown_keys_in_package(tmp_path) == [
        "bad.py:1: [autonomy.allowed_commands] is not a config key"
    ]

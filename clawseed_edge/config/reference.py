"""The configuration reference (docs/config.md), generated from the schema.

Every table and key of :class:`~clawseed_edge.config.schema.Config`, with its type and default,
is read from the msgspec Structs (including the sections other layers embed: ``[provider]``,
``[memory]``, ``[[devices]]``, ``[[sensors]]`` ...); a key's description is its entry in the
Struct's ``Attributes:`` docstring section, or a ``#:`` comment above the field. Regenerate the
page after a schema change (a test fails while it is stale)::

    python -m clawseed_edge.config.reference > docs/config.md
"""

from __future__ import annotations

import enum
import inspect
import re
import types
import typing
from typing import Any

import msgspec

from .schema import Config
from .toml_text import value_text

__all__ = ["REGENERATE", "render"]

#: The command that rewrites the page; the staleness test names it.
REGENERATE = "python -m clawseed_edge.config.reference > docs/config.md"

_CONSTRAINTS = (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<"))


def render() -> str:
    """The whole reference page as Markdown (deterministic: same schema, same text)."""
    out = [
        "# Configuration reference",
        "",
        "<!-- Generated from clawseed_edge/config/schema.py; do not edit by hand. -->",
        f"<!-- Regenerate: {REGENERATE} -->",
        "",
        "The config file is TOML: `--config PATH`, else `$CLAWSEED_HOME/config.toml`",
        "(home default `~/.clawseed-edge`), else an embedded default (simulated board, offline",
        "demo model). Every key is optional unless marked *required*; a key left out takes the",
        "default shown. An environment variable `CLAWSEED__SECTION__KEY=value` overrides a key",
        "(`CLAWSEED__AGENT__MAX_HISTORY=20`). `clawseed-edge config show` prints the effective",
        "config, `clawseed-edge config check [PATH]` validates a file.",
        "",
    ]
    done: dict[type, str] = {}
    for field in msgspec.structs.fields(Config):
        _section(out, Config, field, field.name, done)
    return "\n".join(out).rstrip("\n") + "\n"


def _section(
    out: list[str], owner: type, field: msgspec.structs.FieldInfo, path: str, done: dict[type, str]
) -> None:
    """A table's heading, description and key table, then its sub-tables (depth first)."""
    hint = _hints(owner)[field.name]
    struct, many = _struct_of(hint)
    header = f"[[{path}]]" if many else f"[{path}]"
    description = _descriptions(owner).get(field.name, "")
    if struct is None:
        if many or _is_dict_list(hint):  # [[peripherals]]: free-form tables
            out += [f"## `{header}`", "", description, ""]
        return
    out += [f"## `{header}`", ""]
    summary = _summary(struct)
    for text in (description, summary):
        if text:
            out += [text, ""]
    if struct in done:
        out += [f"The same keys as `{done[struct]}`.", ""]
        return
    done[struct] = header
    keys = _descriptions(struct)
    hints = _hints(struct)
    out += ["| key | type | default | description |", "| --- | --- | --- | --- |"]
    subs: list[msgspec.structs.FieldInfo] = []
    for sub in msgspec.structs.fields(struct):
        if _struct_of(hints[sub.name])[0] is not None:
            subs.append(sub)
            continue
        # The type column escapes its own "|"; a description gets its "|" escaped here.
        description = _one_line(keys.get(sub.name, "")).replace("|", "\\|")
        row = [f"`{sub.encode_name}`", _type(hints[sub.name]), _default(sub), description]
        out.append("| " + " | ".join(row) + " |")
    out.append("")
    for sub in subs:
        _section(out, struct, sub, f"{path}.{sub.encode_name}", done)


def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls, include_extras=True)


def _struct_of(hint: Any) -> tuple[type | None, bool]:
    """The Struct a field holds (directly, optionally, or as a list of them) and whether many."""
    hint = _strip(hint)
    origin = typing.get_origin(hint)
    if origin is list:
        inner, _ = _struct_of(typing.get_args(hint)[0])
        return inner, True
    if origin in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(hint) if a is not type(None)]
        if len(members) == 1:
            return _struct_of(members[0])
        return None, False
    if isinstance(hint, type) and issubclass(hint, msgspec.Struct):
        return hint, False
    return None, False


def _is_dict_list(hint: Any) -> bool:
    hint = _strip(hint)
    return typing.get_origin(hint) is list and typing.get_origin(typing.get_args(hint)[0]) is dict


def _strip(hint: Any) -> Any:
    return typing.get_args(hint)[0] if typing.get_origin(hint) is typing.Annotated else hint


def _type(hint: Any) -> str:
    """A short, human type name: ``int (>= 1)``, ``"a" | "b"``, ``list of string``."""
    if typing.get_origin(hint) is typing.Annotated:
        base, *metas = typing.get_args(hint)
        bounds = [
            f"{sign} {getattr(meta, name)}"
            for meta in metas
            if isinstance(meta, msgspec.Meta)
            for name, sign in _CONSTRAINTS
            if getattr(meta, name) is not None
        ]
        for meta in metas:
            if isinstance(meta, msgspec.Meta) and meta.min_length is not None:
                bounds.append(f"at least {meta.min_length} long")
        text = _type(base)
        return f"{text} ({', '.join(bounds)})" if bounds else text
    origin = typing.get_origin(hint)
    if origin is typing.Literal:
        return " \\| ".join(f'`"{v}"`' if isinstance(v, str) else f"`{v}`" for v in hint.__args__)
    if origin in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(hint) if a is not type(None)]
        text = " \\| ".join(_type(m) for m in members)
        return text if len(members) == len(typing.get_args(hint)) else f"{text} (optional)"
    if origin is list:
        return f"list of {_type(typing.get_args(hint)[0])}"
    if origin is dict:
        return "table"
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return " \\| ".join(f'`"{m.value}"`' for m in hint)
    names = {str: "string", int: "integer", float: "float", bool: "boolean"}
    if hint is Any:
        return "any"
    return names.get(hint, getattr(hint, "__name__", str(hint)))


def _default(field: msgspec.structs.FieldInfo) -> str:
    if field.default is not msgspec.NODEFAULT:
        value = field.default
    elif field.default_factory is not msgspec.NODEFAULT:
        value = field.default_factory()
    else:
        return "*required*"
    if value is None:
        return "unset"
    # The TOML spelling, as the user would write it in the file.
    return f"`{value_text(msgspec.to_builtins(value))}`"


def _one_line(text: str) -> str:
    """Text that fits in one Markdown table cell (no line breaks)."""
    return " ".join(text.split())


def _summary(cls: type) -> str:
    """The docstring before its first Google section, as one paragraph."""
    doc = inspect.getdoc(cls) or ""
    text = re.split(r"\n\s*(?:Attributes|Args|Raises|Example|Examples):\s*\n", doc)[0]
    return " ".join(text.split())


def _descriptions(cls: type) -> dict[str, str]:
    """Field name -> description, from ``Attributes:`` entries and ``#:`` comments."""
    found: dict[str, str] = {}
    doc = inspect.getdoc(cls) or ""
    section = re.search(r"\nAttributes:\s*\n(?P<body>(?:[ \t]+.*\n?|\s*\n)*)", doc)
    if section:
        name = None
        for line in section.group("body").splitlines():
            entry = re.match(r"^ {4}(?P<name>\w+)(?: \([^)]*\))?:\s*(?P<text>.*)$", line)
            if entry:
                name = entry.group("name")
                found[name] = entry.group("text")
            elif name and line.strip():
                found[name] += " " + line.strip()
    try:
        source = inspect.getsource(cls)
    except (OSError, TypeError):  # no source (a frozen install): docstrings only
        return found
    comment: list[str] = []
    for line in source.splitlines():
        stripped = line.strip()
        if stripped.startswith("#:"):
            comment.append(stripped[2:].strip())
            continue
        field = re.match(r"^(\w+)\s*:", stripped)
        if comment and field:
            found.setdefault(field.group(1), " ".join(comment))
        comment = []
    return found


if __name__ == "__main__":
    import sys

    sys.stdout.write(render())

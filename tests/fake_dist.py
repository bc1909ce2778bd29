"""Installed-looking distributions in a temporary directory, for entry-point plugins.

``importlib.metadata`` finds a distribution by its ``<name>-<version>.dist-info`` directory on
``sys.path``; writing one (METADATA and entry_points.txt) and prepending the directory makes
its entry points visible exactly as a ``pip install`` would, with no monkeypatching of the
lookup.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest


def fake_distribution(
    root: Path,
    name: str,
    entry_points: Mapping[str, Mapping[str, str]],
    *,
    version: str = "1.0",
) -> Path:
    """Write the dist-info of ``name`` under ``root`` (groups -> {entry name: "mod:attr"})."""
    info = root / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8"
    )
    lines: list[str] = []
    for group, entries in entry_points.items():
        lines.append(f"[{group}]")
        lines.extend(f"{entry} = {value}" for entry, value in entries.items())
        lines.append("")
    (info / "entry_points.txt").write_text("\n".join(lines), encoding="utf-8")
    return info


def install(
    monkeypatch: pytest.MonkeyPatch,
    root: Path,
    name: str,
    entry_points: Mapping[str, Mapping[str, str]],
) -> None:
    """Write ``name``'s dist-info under ``root`` and put ``root`` first on ``sys.path``."""
    fake_distribution(root, name, entry_points)
    monkeypatch.syspath_prepend(str(root))

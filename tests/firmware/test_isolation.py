"""The firmware shares no imports with the package and uses only what MicroPython has."""

from __future__ import annotations

import ast

import pytest

from clawseed_edge.peripherals.serial.pintable import FIRMWARE_DIR

ALLOWED = {"gc", "json", "sys", "time", "select", "machine", "pyb"} | {
    "clawseed_core", "clawseed_hw", "clawseed_loop", "clawseed_pins", "clawseed_timers",
}  # fmt: skip


@pytest.mark.parametrize("source", sorted(FIRMWARE_DIR.rglob("*.py")), ids=lambda p: p.name)
def test_firmware_imports_only_micropython_modules(source: object) -> None:
    tree = ast.parse(source.read_text(encoding="utf-8"))  # type: ignore[attr-defined]
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add((node.module or "").split(".")[0])
        elif isinstance(node, ast.JoinedStr):
            pytest.fail(f"{source}: f-strings are not in every MicroPython build")
    assert imported <= ALLOWED, f"{source} imports {sorted(imported - ALLOWED)}"

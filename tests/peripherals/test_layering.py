"""The peripherals layer imports only the api (plus gpiozero, msgspec and the stdlib)."""

from __future__ import annotations

import ast
from pathlib import Path

import clawseed_edge.peripherals as package

ALLOWED_INTERNAL = ("clawseed_edge.api", "clawseed_edge.peripherals")


def test_peripherals_import_only_the_api() -> None:
    root = Path(package.__file__).parent
    offenders = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                if name.startswith("clawseed_edge") and not name.startswith(ALLOWED_INTERNAL):
                    offenders.append(f"{path.relative_to(root)}: {name}")
    assert offenders == []


def test_importing_the_package_does_not_import_gpiozero() -> None:
    import subprocess
    import sys

    code = "import sys, clawseed_edge.peripherals; print('gpiozero' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"

"""The serial package's face: every exported name resolves, and importing it stays cheap."""

from __future__ import annotations

import subprocess
import sys

import clawseed_edge.peripherals.serial as serial_pkg


def test_every_exported_name_resolves_to_its_home_module() -> None:
    for name in serial_pkg.__all__:
        value = getattr(serial_pkg, name)
        assert value.__name__ == name
        assert value.__module__.startswith("clawseed_edge.peripherals.serial.")


def test_importing_the_package_loads_no_serial_or_flash_library() -> None:
    code = (
        "import sys, clawseed_edge.peripherals.serial\n"
        "print(sorted(m for m in ('serial', 'mpremote', 'pyocd') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"

"""The sensor packages' faces: exports complete, hardware libraries imported lazily."""

from __future__ import annotations

import importlib
import subprocess
import sys
import types

import pytest

FACES = [
    "clawseed_edge.peripherals.i2c",
    "clawseed_edge.peripherals.i2c.sim",
    "clawseed_edge.peripherals.sysfs",
    "clawseed_edge.peripherals.sensors",
]


@pytest.mark.parametrize("name", FACES)
def test_all_equals_the_public_names_and_resolves(name: str) -> None:
    module = importlib.import_module(name)
    exported = list(module.__all__)
    assert all(getattr(module, n, None) is not None for n in exported)  # lazy names load now
    public = {
        n
        for n, v in vars(module).items()
        if not n.startswith("_") and not isinstance(v, types.ModuleType) and n != "annotations"
    }
    assert len(exported) == len(set(exported))
    assert set(exported) == public
    assert all(getattr(module, n, None) is not None for n in exported)


def test_importing_the_sensor_packages_does_not_import_smbus2_or_gpiozero() -> None:
    code = (
        "import sys\n"
        "import clawseed_edge.peripherals.i2c, clawseed_edge.peripherals.sysfs\n"
        "import clawseed_edge.peripherals.sensors.bank\n"
        "print('smbus2' in sys.modules, 'gpiozero' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False False"

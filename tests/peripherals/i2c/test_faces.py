"""The sensor packages' faces: exports complete, hardware libraries imported lazily."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

FACES = [
    "clawseed_edge.peripherals.i2c",
    "clawseed_edge.peripherals.i2c.sim",
    "clawseed_edge.peripherals.sysfs",
    "clawseed_edge.peripherals.sensors",
]


@pytest.mark.parametrize("name", FACES)
def test_exports_resolve_and_are_sorted(name: str) -> None:
    module = importlib.import_module(name)
    exported = list(module.__all__)
    assert exported == sorted(exported, key=lambda n: (not n.isupper(), n))
    for item in exported:
        assert getattr(module, item) is not None
    public_classes = {
        n
        for n, v in vars(module).items()
        if isinstance(v, type) and not n.startswith("_") and v.__module__.startswith(name)
    }
    assert public_classes <= set(exported)


def test_importing_the_sensor_packages_does_not_import_smbus2_or_gpiozero() -> None:
    code = (
        "import sys\n"
        "import clawseed_edge.peripherals.i2c, clawseed_edge.peripherals.sysfs\n"
        "import clawseed_edge.peripherals.sensors.bank\n"
        "print('smbus2' in sys.modules, 'gpiozero' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False False"

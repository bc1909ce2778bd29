"""The channels floor's face: every exported name resolves; importing it loads no channel,
and a channel never imports a sibling (tests/test_layers.py checks the whole graph)."""

from __future__ import annotations

import importlib
import subprocess
import sys


def test_every_exported_name_resolves() -> None:
    module = importlib.import_module("clawseed_edge.channels")
    assert sorted(module.__all__) == sorted(set(module.__all__))
    for name in module.__all__:
        assert getattr(module, name) is not None, name


def test_importing_the_floor_loads_no_channel_and_no_web_stack() -> None:
    code = (
        "import sys, clawseed_edge.channels; "
        "print([m for m in sys.modules if m.startswith('clawseed_edge.channels.') "
        "or m in ('starlette', 'uvicorn', 'clawseed_edge.peripherals')])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"

"""Public faces: every exported name resolves, and the CLI does not load the gateway stack."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest


@pytest.mark.parametrize(
    "package",
    [
        "clawseed_edge.channels.gateway",
        "clawseed_edge.service",
        "clawseed_edge.client",
        "clawseed_edge.state",
    ],
)
def test_every_exported_name_resolves(package: str) -> None:
    module = importlib.import_module(package)
    for name in module.__all__:
        assert getattr(module, name) is not None, f"{package}.{name}"


def test_client_and_state_import_only_the_api_layer() -> None:
    code = (
        "import sys; import clawseed_edge.client, clawseed_edge.state; "
        "print(sorted({m.split('.')[1] for m in sys.modules if m.startswith('clawseed_edge.')}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert eval(out) == ["api", "client", "state"]


def test_the_cli_parser_and_agent_command_do_not_import_starlette_or_uvicorn() -> None:
    code = (
        "import sys; from clawseed_edge.cli.main import build_parser; build_parser(); "
        "import clawseed_edge.service, clawseed_edge.channels.gateway; "
        "print([m for m in ('starlette', 'uvicorn', 'websockets') if m in sys.modules])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"

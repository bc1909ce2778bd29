"""The packages of what a config turns on: doctor names them, run/gateway refuse in one line."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from clawseed_edge.config.doctor import Machine, check_packages, make_context
from clawseed_edge.config.packages import GATEWAY_MODULES, package_needs

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def _config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_plain_install_brings_the_gateway_the_pi_service_line_turns_on() -> None:
    # docs/raspberry-pi.md's steps are `pip install -e .` then `service install --gateway`.
    data = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    base = {Requirement(line).name for line in data["project"]["dependencies"]}
    assert set(GATEWAY_MODULES) <= base
    # ...and the extra still exists, so old install lines keep working.
    assert "gateway" in data["project"]["optional-dependencies"]


def test_every_extra_the_messages_name_exists(tmp_path: Path) -> None:
    data = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    extras = data["project"]["optional-dependencies"]
    text = '[provider]\nname = "anthropic"\nmodel = "m"\n[gateway]\nenabled = true\n'
    from clawseed_edge.config.file import load_config

    needs = package_needs(load_config(_config(tmp_path, text)).config)
    assert [n.extra for n in needs] == ["gateway", "anthropic"]
    assert all(n.extra in extras for n in needs)


def test_doctor_fails_a_gateway_turned_on_without_its_packages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "starlette", None)  # find_spec: not installed
    ctx = make_context(_config(tmp_path, "[gateway]\nenabled = true\n"), Machine())
    result = check_packages(ctx)
    assert result.status == "fail"
    assert "the gateway needs starlette" in result.summary
    assert result.fix == "pip install 'clawseed-edge[gateway]'"


def test_doctor_is_content_when_nothing_optional_is_on(tmp_path: Path) -> None:
    ctx = make_context(_config(tmp_path, '[provider]\nname = "demo"\n'), Machine())
    assert check_packages(ctx).status == "ok"


@pytest.mark.parametrize("argv", [["gateway", "--sim", "--port", "0"], ["run", "--sim"]])
def test_run_and_gateway_without_the_packages_say_one_line_with_the_install(
    tmp_path: Path, argv: list[str]
) -> None:
    config = _config(tmp_path, '[provider]\nname = "demo"\n[gateway]\nenabled = true\nport = 0\n')
    code = (
        "import sys; sys.modules['starlette'] = None\n"
        "from clawseed_edge.cli.main import main\n"
        f"sys.exit(main(['--config', {str(config)!r}, *{argv!r}]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert lines == [
        "error: the gateway needs starlette, which is not installed: run "
        "pip install 'clawseed-edge[gateway]'"
    ], done.stderr

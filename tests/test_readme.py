"""The documented examples run as written: the embedding example (docs/embedding.md), the user
test suite (docs/testing.md) and the fleet configs (docs/fleet.md)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"
#: Where each marked example lives.
PAGES = {"example-embed": DOCS / "embedding.md", "example-test": DOCS / "testing.md"}


def block(marker: str) -> str:
    page = PAGES[marker]
    match = re.search(rf"<!-- {marker} -->\s*```python\n(.*?)```", page.read_text(), re.S)
    assert match, f"{page.name} lost its {marker} block"
    return match.group(1)


def test_embedding_example_runs_a_turn_with_the_custom_tool(tmp_path: Path) -> None:
    script = tmp_path / "embed.py"
    script.write_text(block("example-embed"), encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert "'type': 'tool_call'" in lines[0] and "greenhouse_temperature" in lines[0]
    assert "'output': '23.5 C'" in lines[1]
    assert "'type': 'done'" in lines[-1] and "It is 23.5 C." in lines[-1]


PYPROJECT = """\
[project]
name = "my-greenhouse"
version = "0.1"

[tool.pytest.ini_options]
testpaths = ["tests"]
{extra}
"""


@pytest.mark.parametrize(
    "extra", ["", 'asyncio_mode = "auto"'], ids=["fresh project", "asyncio_mode auto"]
)
def test_user_test_example_passes_in_a_fresh_project(tmp_path: Path, extra: str) -> None:
    """The README's test file, copied as written into a project of the user's own (its own
    pyproject, no conftest, pytest-asyncio in its default strict mode), passes."""
    project = tmp_path / "greenhouse"
    (project / "tests").mkdir(parents=True)
    (project / "pyproject.toml").write_text(PYPROJECT.format(extra=extra), encoding="utf-8")
    (project / "tests" / "test_my_setup.py").write_text(block("example-test"), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--rootdir", str(project)],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"rootdir: {project}" in proc.stdout, "the user's project, not this repository"
    assert re.search(r"\b2 passed", proc.stdout), proc.stdout


def test_the_example_runs_with_no_deprecation_warning(tmp_path: Path) -> None:
    """pytest-asyncio warns on every run while its fixture loop scope is unset: the plugin
    sets it for a project that did not."""
    project = tmp_path / "greenhouse"
    (project / "tests").mkdir(parents=True)
    (project / "pyproject.toml").write_text(PYPROJECT.format(extra=""), encoding="utf-8")
    (project / "tests" / "test_my_setup.py").write_text(block("example-test"), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--rootdir", str(project)],
        cwd=project, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Warning" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr


@pytest.mark.slow
def test_the_example_passes_in_a_fresh_venv_after_the_install_the_readme_names(
    tmp_path: Path,
) -> None:
    """A fresh venv with only what the README's install line brings (pip's cache makes it
    quick), the example test as written, `python -m pytest`: 2 passed, no warning."""
    section = PAGES["example-test"].read_text()
    found = re.search(r"in the\s+checkout itself: `pip install -e '\.\[(\w+)\]'`", section)
    assert found, "docs/testing.md lost its install line"
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    repo = DOCS.parent
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "-e", f"{repo}[{found.group(1)}]"],
        capture_output=True, text=True, timeout=280, check=False,
    )  # fmt: skip
    assert install.returncode == 0, install.stderr[-3000:]
    project = tmp_path / "greenhouse"
    (project / "tests").mkdir(parents=True)
    (project / "tests" / "test_my_setup.py").write_text(block("example-test"), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PYTHON"))}
    proc = subprocess.run(
        [str(python), "-m", "pytest", "-p", "no:cacheprovider"],
        cwd=project, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(r"\b2 passed", proc.stdout), proc.stdout
    assert "Warning" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr


def test_without_pytest_asyncio_the_example_says_what_to_install(tmp_path: Path) -> None:
    project = tmp_path / "greenhouse"
    (project / "tests").mkdir(parents=True)
    (project / "pyproject.toml").write_text(PYPROJECT.format(extra=""), encoding="utf-8")
    (project / "tests" / "test_my_setup.py").write_text(block("example-test"), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:asyncio",
         "--rootdir", str(project)],
        cwd=project, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    # Each of the two async tests errors with the line (pytest may repeat it in its summary).
    assert "2 errors" in out, out
    assert "pytest-asyncio is not installed: run pip install pytest-asyncio" in out
    assert "Unknown pytest.mark.asyncio" not in out


@pytest.mark.parametrize("node", ["shed", "greenhouse"])
def test_the_several_pis_configs_load_as_written(tmp_path: Path, node: str) -> None:
    """docs/fleet.md's config for each Pi is a valid config (the key names, the
    board, the [mqtt] table)."""
    from clawseed_edge.config.file import load_config

    match = re.search(
        rf"<!-- example-fleet-{node} -->\s*```toml\n(.*?)```", (DOCS / "fleet.md").read_text(), re.S
    )
    assert match, f"docs/fleet.md lost its example-fleet-{node} block"
    path = tmp_path / "config.toml"
    path.write_text("\n".join(line.strip() for line in match.group(1).splitlines()))
    config = load_config(path).config
    assert config.mqtt.enabled and config.mqtt.node_id == node
    assert config.mqtt.password_env == "MQTT_PASSWORD"

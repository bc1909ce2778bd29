"""The README's examples run as written: the embedding example and the user test suite."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def block(marker: str) -> str:
    match = re.search(rf"<!-- {marker} -->\s*```python\n(.*?)```", README.read_text(), re.S)
    assert match, f"README.md lost its {marker} block"
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


def test_user_test_example_passes_through_the_installed_plugin(tmp_path: Path) -> None:
    (tmp_path / "test_my_setup.py").write_text(block("example-test"), encoding="utf-8")
    (tmp_path / "pytest.ini").write_text("[pytest]\nasyncio_mode = auto\n", encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(r"\b2 passed", proc.stdout), proc.stdout

"""Run a script in a fresh interpreter (``sys.modules`` is per process) against a config file:
what the idle-import tests share."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then closed again)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_script(script: str, config_text: str, tmp_path: Path) -> tuple[Any, str]:
    """Write ``config_text`` to ``tmp_path/config.toml``, run ``script`` with its path as
    ``sys.argv[1]`` and an empty ``CLAWSEED_HOME`` under ``tmp_path``; returns the JSON of its
    last line of output and its stderr. Fails the test if the script fails."""
    config = tmp_path / "config.toml"
    config.write_text(config_text, encoding="utf-8")
    env = {"PATH": "", "PYTHONNOUSERSITE": "1", "CLAWSEED_HOME": str(tmp_path / "home")}
    out = subprocess.run(
        [sys.executable, "-c", script, str(config)],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1]), out.stderr

"""A device limited to one switch a minute switches once across four one-shot `agent` runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

CONFIG = """
[provider]
name = "demo"

[autonomy]
level = "full"

[hardware]
board = "sim"

[[devices]]
name = "pump"
pin = "GPIO24"
kind = "digital_out"
max_switches_per_minute = 1
"""


def test_four_one_shot_agents_switch_a_one_per_minute_pump_once(
    tmp_path: Path, clawseed_home: Path
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(CONFIG, encoding="utf-8")
    switched = refused = 0
    for _ in range(4):
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "clawseed_edge",
                "--config",
                str(config),
                "agent",
                "-m",
                "turn on the pump",
            ],
            capture_output=True,
            text=True,
            env=dict(os.environ),
            timeout=120,
        )
        assert run.returncode == 0, run.stderr
        if "<- ok" in run.stderr and "pump (GPIO24) is now on" in run.stderr:
            switched += 1
        elif "reached its max_per_minute=1" in run.stdout + run.stderr:
            refused += 1
    assert (switched, refused) == (1, 3)
    assert (clawseed_home / "state.db").exists()

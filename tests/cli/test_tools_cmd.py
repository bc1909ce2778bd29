"""``clawseed-edge tools list``: every tool with its risk class, on or off, and for a built-in
that is off the config key that turns it on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clawseed_edge.cli.main import main


def rows_of(out: str) -> dict[str, list[str]]:
    return {line.split()[0]: line.split(maxsplit=3)[1:] for line in out.splitlines() if line}


def test_default_lists_every_builtin_with_risk_and_state(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["tools", "list", "--sim"]) == 0
    rows = rows_of(capsys.readouterr().out)
    assert rows["system_info"][:2] == ["read", "on"]
    assert rows["memory_store"][:2] == ["act", "on"]
    assert rows["shell"] == ["dangerous", "off", "(off: set [tools] shell = true)"]
    assert rows["http_request"][:2] == ["act", "off"]
    assert rows["web_fetch"][:2] == ["read", "off"]
    assert "[tools] web_fetch = true and list the hosts" in rows["web_fetch"][2]
    assert rows["gpio_switch"][:2] == ["act", "on"], "hardware tools are listed too"


def test_a_config_that_turns_tools_on_and_filters_one_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        '[provider]\nname = "demo"\n[tools]\nweb_fetch = true\nshell = true\n'
        'denied = ["shell"]\n[tools.http]\nallowed_domains = ["example.com"]\n',
        encoding="utf-8",
    )
    assert main(["tools", "list", "--config", str(path), "--json"]) == 0
    tools = {t["name"]: t for t in json.loads(capsys.readouterr().out)}
    assert tools["web_fetch"]["enabled"] is True and tools["web_fetch"]["risk"] == "read"
    assert tools["web_fetch"]["parameters"]["required"] == ["url"]
    assert tools["shell"] == {
        "name": "shell",
        "risk": "dangerous",
        "enabled": False,
        "off_reason": "filtered out by [tools] allowed / denied",
    }
    assert tools["http_request"]["enabled"] is False
    assert "set [tools] http_request = true" in tools["http_request"]["off_reason"]


def test_the_cron_tools_of_the_service_are_listed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["tools", "list", "--sim"]) == 0
    rows = rows_of(capsys.readouterr().out)
    assert rows["cron_add"][:2] == ["act", "on"]
    assert rows["cron_list"][:2] == ["read", "on"]
    assert "only in `clawseed-edge run`" in rows["cron_remove"][2]

    path = tmp_path / "config.toml"
    path.write_text(
        '[provider]\nname = "demo"\n[tools]\ndenied = ["cron_remove"]\n', encoding="utf-8"
    )
    assert main(["tools", "list", "--config", str(path), "--json"]) == 0
    tools = {t["name"]: t for t in json.loads(capsys.readouterr().out)}
    assert tools["cron_remove"]["off_reason"] == "filtered out by [tools] allowed / denied"
    assert tools["cron_add"]["enabled"] is True

    path.write_text('[provider]\nname = "demo"\n[scheduler]\nenabled = false\n', "utf-8")
    assert main(["tools", "list", "--config", str(path), "--json"]) == 0
    tools = {t["name"]: t for t in json.loads(capsys.readouterr().out)}
    assert tools["cron_add"]["off_reason"] == "set [scheduler] enabled = true"


def test_the_service_level_pythonoptimize_2_gives_the_model_the_same_tools(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The unit runs the service with PYTHONOPTIMIZE=2 (no docstrings, no asserts): no tool's
    name, description or parameters may come from a docstring or depend on an assert."""
    import os
    import subprocess
    import sys

    assert main(["tools", "list", "--sim", "--json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    env = {**os.environ, "PYTHONOPTIMIZE": "2", "CLAWSEED_HOME": os.environ["CLAWSEED_HOME"]}
    done = subprocess.run(
        [sys.executable, "-m", "clawseed_edge", "tools", "list", "--sim", "--json"],
        env=env, cwd=tmp_path, capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    optimized = json.loads(done.stdout)
    assert len(plain) > 20
    assert optimized == plain
    assert all(t.get("description") for t in optimized if t["enabled"]), "every tool described"

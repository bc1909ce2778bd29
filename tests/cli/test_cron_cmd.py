"""``clawseed-edge cron`` on state.db with no service running."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clawseed_edge.cli.main import main

CONFIG = """
[provider]
name = "demo"
[autonomy]
level = "{level}"
[scheduler]
timezone = "Europe/Berlin"
[hardware]
board = "sim"
[[devices]]
name = "porch_light"
pin = "GPIO17"
kind = "led"
"""


@pytest.fixture
def config(clawseed_home: Path) -> Path:
    path = clawseed_home / "config.toml"
    path.write_text(CONFIG.replace("{level}", "full"), encoding="utf-8")
    return path


def test_add_shows_the_schedule_in_words_and_lists_it(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "cron",
            "add",
            "porch_off",
            "--cron",
            "0 0 * * *",
            "--tool",
            "gpio_switch",
            "--args",
            '{"device": "porch_light", "on": false}',
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "At 00:00 every day (Europe/Berlin)" in out
    assert out.count("next: ") == 3 and "00:00 CET" in out
    assert main(["cron", "list", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["name"] == "porch_off" and row["origin"] == "cli" and row["next_run"]
    assert row["action"] == 'call gpio_switch {"device": "porch_light", "on": false}'


def test_run_now_without_a_service_runs_here_and_runs_lists_it(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["cron", "add", "status", "--every", "1h", "--tool", "hardware_status"]) == 0
    assert main(["cron", "run-now", "status", "--sim"]) == 0
    assert "porch_light" in capsys.readouterr().out
    assert main(["cron", "runs", "--json"]) == 0
    run = json.loads(capsys.readouterr().out)
    assert (run["job"], run["status"]) == ("status", "ok")
    assert main(["cron", "remove", "status"]) == 0
    assert main(["cron", "runs"]) == 0
    assert "no runs yet" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["x", "--cron", "0 25 * * *", "--prompt", "hi"], "Bad hour"),
        (["x", "--every", "soon", "--prompt", "hi"], "is not a duration"),
        (["x", "--at", "2020-01-01T00:00", "--prompt", "hi"], "has passed"),
        (["x y", "--every", "1m", "--prompt", "hi"], "is not a job name"),
        (["x", "--every", "1m", "--prompt", "hi", "--deliver", "email"], "deliver"),
        (["x", "--every", "1m", "--tool", "t", "--args", "[1]"], "is not a JSON object"),
        (["x", "--every", "1m", "--shell", "rm -rf /"], "not in the shell allowlist"),
    ],
)
def test_bad_input_is_refused_naming_it(
    config: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert main(["cron", "add", *argv]) == 1
    assert message in capsys.readouterr().err


def test_a_shell_job_in_supervised_needs_yes_off_a_terminal(
    clawseed_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = clawseed_home / "config.toml"
    path.write_text(CONFIG.replace("{level}", "supervised"), encoding="utf-8")
    assert main(["cron", "add", "up", "--every", "1h", "--shell", "uptime"]) == 1
    assert "needs approval in supervised" in capsys.readouterr().err
    assert main(["cron", "add", "up", "--every", "1h", "--shell", "uptime", "--yes"]) == 0


@pytest.mark.parametrize(
    ("tool", "args", "said"),
    [
        ("gpio_swich", "{}", "no tool is named 'gpio_swich'"),
        ("gpio_switch", '{"device": "porch_light"}', "must contain ['on']"),
        ("cron_add", "{}", "a job cannot schedule other jobs"),
    ],
)
def test_a_tool_job_the_agent_could_never_run_is_refused_when_added(
    config: Path, capsys: pytest.CaptureFixture[str], tool: str, args: str, said: str
) -> None:
    code = main(["cron", "add", "porch_off", "--cron", "0 0 * * *", "--tool", tool, "--args", args])
    err = capsys.readouterr().err
    assert code == 1 and f"--tool {tool}: " in err and said in err
    assert main(["cron", "list", "--json"]) == 0
    assert capsys.readouterr().out.strip() == "", "nothing was stored"


def test_runs_of_a_job_that_does_not_exist_says_so(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["cron", "runs", "nosuch"]) == 1
    assert "no job is named 'nosuch'" in capsys.readouterr().err
    assert main(["cron", "add", "quiet", "--every", "1h", "--prompt", "hi"]) == 0
    capsys.readouterr()
    assert main(["cron", "runs", "quiet"]) == 0  # it exists and has not run
    assert "no runs yet" in capsys.readouterr().out

"""``clawseed-edge automations add|remove|list|firings`` on state.db with no service running
(the service path is in tests/service/test_sensor_history_service.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clawseed_edge.cli.main import main

CONFIG = """
[provider]
name = "demo"
[hardware]
board = "sim"
[[devices]]
name = "fan"
pin = "GPIO17"
kind = "relay"
[[devices]]
name = "door"
pin = "GPIO5"
kind = "digital_in"
[[sensors]]
name = "greenhouse"
driver = "ds18b20"
[[sensors]]
name = "shed"
driver = "dht22"
update_interval = "never"
"""


@pytest.fixture
def config(clawseed_home: Path) -> Path:
    path = clawseed_home / "config.toml"
    path.write_text(CONFIG, encoding="utf-8")
    return path


def test_add_list_remove_without_a_service(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["automations", "add", "too_hot", "--when", "greenhouse.temperature > 30"]
    argv += ["--for", "2m", "--until", "greenhouse.temperature < 28", "--tool", "gpio_switch"]
    argv += ["--args", '{"device": "fan", "on": true}', "--notify", "phones,telegram"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "added too_hot: When greenhouse.temperature > 30 for 120 s: call gpio_switch" in out
    assert "no service runs now" in out
    assert main(["automations", "add", "door", "--when", "door.open", "--message", "open!"]) == 0
    capsys.readouterr()
    assert main(["automations", "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(r["name"], r["origin"]) for r in listed["automations"]] == [
        ("door", "cli"),
        ("too_hot", "cli"),
    ]
    assert main(["automations", "firings", "too_hot"]) == 0
    assert "no firings yet" in capsys.readouterr().out
    assert main(["automations", "remove", "too_hot"]) == 0
    assert main(["automations", "remove", "too_hot"]) == 1
    assert "no automation is named 'too_hot'" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--when", "greenhouse.temperature >", "--message", "x"], "when: 'r': "),
        (["--when", "attic.temperature > 1", "--message", "x"], "no sensor or device is named"),
        (["--when", "greenhouse.pressure > 1", "--message", "x"], "greenhouse has no 'pressure'"),
        (["--when", "shed.humidity > 1", "--message", "x"], "shed is read only on demand"),
        (["--when", "door.open", "--tool", "laser"], "do: tool: no tool is named 'laser'"),
        (["--when", "door.open", "--tool", "gpio_switch", "--args", "[1]"], "--args: "),
        (["--when", "door.open"], "give do = "),
    ],
)
def test_add_refuses_a_bad_rule_naming_what(
    config: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    assert main(["automations", "add", "r", *extra]) == 1
    assert message in capsys.readouterr().err
    assert main(["automations", "list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["automations"] == []

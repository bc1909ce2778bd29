"""Config values are checked at load: types strictly, ranges, enums with their allowed values,
system directories refused, and errors caused by environment variables name the variable."""

from __future__ import annotations

from pathlib import Path

import pytest

from clawseed_edge.api import ConfigInvalid
from clawseed_edge.config.file import load_config


def load(tmp_path: Path, text: str, environ: dict[str, str] | None = None) -> object:
    path = tmp_path / "c.toml"
    path.write_text(text, encoding="utf-8")
    env = {"CLAWSEED_HOME": str(tmp_path / "home"), **(environ or {})}
    return load_config(path, environ=env)


def error(tmp_path: Path, text: str, environ: dict[str, str] | None = None) -> str:
    with pytest.raises(ConfigInvalid) as info:
        load(tmp_path, text, environ)
    return str(info.value)


@pytest.mark.parametrize(
    ("text", "key", "expected"),
    [
        ('[agent]\nmax_tool_iterations = "10"\n', "agent.max_tool_iterations", "expected int"),
        (
            '[[devices]]\nname = "a"\npin = 17\nkind = "led"\napproval = "false"\n',
            "devices[0].approval",
            "expected bool",
        ),
        ("[agent]\nmax_tool_iterations = 0\n", "agent.max_tool_iterations", ">= 1"),
        ("[agent]\nmax_history = -3\n", "agent.max_history", ">= 1"),
        ("[autonomy]\nmax_actions_per_hour = 0\n", "autonomy.max_actions_per_hour", ">= 1"),
        ("[agent]\ntool_timeout_s = -1\n", "agent.tool_timeout_s", "> 0"),
        ("[agent]\ntool_timeout_s = nan\n", "agent.tool_timeout_s", "finite"),
        ("[autonomy]\napproval_timeout_s = inf\n", "autonomy.approval_timeout_s", "finite"),
        ("[provider]\ntimeout_s = nan\n", "provider.timeout_s", "finite"),
        ('[agent]\nworkspace_dir = "ws\\u0000x"\n', "agent.workspace_dir", "NUL"),
        ('[agent]\nworkspace_dir = "/"\n', "agent.workspace_dir", "system directory"),
        ('[agent]\nworkspace_dir = "/etc"\n', "agent.workspace_dir", "system directory"),
        ('[agent]\nworkspace_dir = "/usr/lib/x"\n', "agent.workspace_dir", "system directory"),
    ],
)
def test_bad_values_fail_at_load_naming_file_and_key(
    tmp_path: Path, text: str, key: str, expected: str
) -> None:
    message = error(tmp_path, text)
    assert f"c.toml: {key}: " in message
    assert expected in message


def test_a_range_error_shows_the_value(tmp_path: Path) -> None:
    assert "got 0" in error(tmp_path, "[agent]\nmax_history = 0\n")


def test_good_values_still_load(tmp_path: Path) -> None:
    loaded = load(
        tmp_path,
        '[agent]\nmax_tool_iterations = 3\ntool_timeout_s = 5\nworkspace_dir = "/srv/ws"\n'
        "[autonomy]\nmax_actions_per_hour = 1\n",
    )
    config = loaded.config  # type: ignore[attr-defined]
    assert config.agent.tool_timeout_s == 5.0
    assert config.agent.workspace_dir == "/srv/ws"


@pytest.mark.parametrize(
    ("text", "key", "allowed"),
    [
        (
            '[[devices]]\nname = "a"\npin = 17\nkind = "LED"\n',
            "devices[0].kind",
            "led, motion_sensor, pwm_led",
        ),
        ('[autonomy]\nlevel = "yolo"\n', "autonomy.level", "full, read_only, supervised"),
        ('[hardware]\nboard = "rpi4"\n', "hardware.board", "rpi4b"),
    ],
)
def test_enum_errors_list_the_allowed_values(
    tmp_path: Path, text: str, key: str, allowed: str
) -> None:
    message = error(tmp_path, text)
    assert f"c.toml: {key}: " in message
    assert allowed in message


def test_a_bad_env_value_names_the_variable_and_the_allowed_values(tmp_path: Path) -> None:
    message = error(tmp_path, "", {"CLAWSEED__AUTONOMY__LEVEL": "bogus"})
    assert "CLAWSEED__AUTONOMY__LEVEL" in message
    assert "full, read_only, supervised" in message
    assert "c.toml" not in message


def test_a_misspelled_env_variable_is_named(tmp_path: Path) -> None:
    message = error(tmp_path, "", {"CLAWSEED__AUTONOMY__LEVLE": "full"})
    assert "CLAWSEED__AUTONOMY__LEVLE" in message
    assert "unknown key" in message and "level" in message
    assert "c.toml" not in message


def test_a_file_error_still_blames_the_file_when_env_is_set(tmp_path: Path) -> None:
    message = error(tmp_path, "[agent]\nmax_history = 0\n", {"CLAWSEED__AUTONOMY__LEVEL": "full"})
    assert "c.toml: agent.max_history" in message


def test_an_env_variable_into_an_array_of_tables_is_refused(tmp_path: Path) -> None:
    message = error(
        tmp_path,
        '[hardware]\nboard = "sim"\n[[devices]]\nname = "a"\npin = 17\nkind = "led"\n',
        {"CLAWSEED__DEVICES__KIND": "relay"},
    )
    assert message.startswith("environment variable CLAWSEED__DEVICES__KIND: devices: ")

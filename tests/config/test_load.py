"""Config loading: errors name the file, the key path and what is expected."""

from __future__ import annotations

import os
from pathlib import Path

import msgspec
import pytest

from clawseed_edge.api import ConfigFileNotFound, ConfigInvalid
from clawseed_edge.config.load import apply_env_overrides, convert_config, read_toml
from clawseed_edge.config.paths import clawseed_home, resolve_in_home
from clawseed_edge.config.schema import AgentSettings, AutonomySettings
from clawseed_edge.config.secrets import lookup_secret, read_secrets


class Device(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    name: str
    pin: str
    active_high: bool = True


class Root(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    agent: AgentSettings = msgspec.field(default_factory=AgentSettings)
    autonomy: AutonomySettings = msgspec.field(default_factory=AutonomySettings)
    devices: list[Device] = msgspec.field(default_factory=list)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def load(path: Path) -> Root:
    return convert_config(read_toml(path), Root, source=str(path))


def test_defaults_from_an_empty_file(tmp_path: Path) -> None:
    cfg = load(write(tmp_path, ""))
    assert cfg.agent.max_tool_iterations == 10
    assert cfg.autonomy.level == "supervised"


def test_missing_file_names_the_path_and_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(ConfigFileNotFound, match=r"nope\.toml: no such config file.*--config"):
        read_toml(tmp_path / "nope.toml")
    assert read_toml(tmp_path / "nope.toml", missing_ok=True) == {}


def test_toml_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, "[agent]\nmax_history = \n")
    with pytest.raises(ConfigInvalid, match=r"config\.toml: not valid TOML: .*line 2"):
        read_toml(path)


def test_wrong_type_names_key_path_and_expected_type(tmp_path: Path) -> None:
    path = write(tmp_path, '[agent]\nmax_history = "fifty"\n')
    with pytest.raises(ConfigInvalid) as info:
        load(path)
    assert str(info.value) == f"{path}: agent.max_history: expected int, got str"
    assert info.value.key == "agent.max_history"


def test_unknown_key_lists_the_allowed_keys(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        '[[devices]]\nname = "a"\npin = "GPIO17"\n[[devices]]\nname="b"\npin="GPIO4"\nactive_hgih = false\n',
    )
    with pytest.raises(ConfigInvalid) as info:
        load(path)
    msg = str(info.value)
    assert msg.startswith(f"{path}: devices[1].active_hgih: unknown key")
    assert "active_high, name, pin" in msg


def test_unknown_top_level_table(tmp_path: Path) -> None:
    path = write(tmp_path, "[agnet]\nmax_history = 3\n")
    with pytest.raises(
        ConfigInvalid, match=r"agnet: unknown key; allowed keys here: agent, autonomy, devices"
    ):
        load(path)


def test_missing_required_key(tmp_path: Path) -> None:
    path = write(tmp_path, '[[devices]]\nname = "a"\n')
    with pytest.raises(ConfigInvalid, match=r"devices\[0\]\.pin: required key is missing"):
        load(path)


def test_literal_value_outside_choices(tmp_path: Path) -> None:
    path = write(tmp_path, '[autonomy]\nlevel = "yolo"\n')
    with pytest.raises(ConfigInvalid, match=r"autonomy\.level: .*"):
        load(path)


def test_env_overrides_parse_toml_values() -> None:
    data = {"agent": {"max_history": 5}}
    out = apply_env_overrides(
        data,
        {
            "CLAWSEED__AGENT__MAX_HISTORY": "7",
            "CLAWSEED__AUTONOMY__LEVEL": "full",
            "CLAWSEED__AUTONOMY__SHELL_ALLOWLIST": '["ls"]',
            "UNRELATED": "x",
        },
    )
    assert out == {
        "agent": {"max_history": 7},
        "autonomy": {"level": "full", "shell_allowlist": ["ls"]},
    }
    assert data == {"agent": {"max_history": 5}}, "the input must not be mutated"


def test_home_and_relative_paths(tmp_path: Path) -> None:
    assert clawseed_home({"CLAWSEED_HOME": str(tmp_path)}) == tmp_path
    assert clawseed_home({}).name == ".clawseed-edge"
    assert resolve_in_home("memory.db", tmp_path) == tmp_path / "memory.db"
    assert resolve_in_home("/abs/m.db", tmp_path) == Path("/abs/m.db")


def test_secrets_file_is_read_and_must_be_private(tmp_path: Path) -> None:
    path = tmp_path / "secrets"
    path.write_text('# keys\nANTHROPIC_API_KEY="sk-test"\nexport OTHER=2\n', encoding="utf-8")
    os.chmod(path, 0o600)
    assert read_secrets(path) == {"ANTHROPIC_API_KEY": "sk-test", "OTHER": "2"}
    assert lookup_secret("ANTHROPIC_API_KEY", path, environ={}) == "sk-test"
    assert lookup_secret("ANTHROPIC_API_KEY", path, environ={"ANTHROPIC_API_KEY": "env"}) == "env"
    assert lookup_secret("MISSING", path, environ={}) is None
    os.chmod(path, 0o644)
    with pytest.raises(ConfigInvalid, match=r"chmod 600"):
        read_secrets(path)


def test_secrets_bad_line_does_not_echo_the_value(tmp_path: Path) -> None:
    path = tmp_path / "secrets"
    path.write_text("sk-very-secret-value\n", encoding="utf-8")
    os.chmod(path, 0o600)
    with pytest.raises(ConfigInvalid) as info:
        read_secrets(path)
    assert "sk-very-secret" not in str(info.value)
    assert "line 1" in str(info.value)

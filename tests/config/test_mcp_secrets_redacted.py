"""Issue 35 item 7: ``[[mcp.servers]]`` credentials (``env`` values, the value after a
``--token``-like flag) are hidden by ``config show``; ``env_from_secrets`` keeps them out of the
file altogether."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import pytest

from clawseed_edge.api import ConfigInvalid
from clawseed_edge.cli.main import main
from clawseed_edge.config.file import load_config
from clawseed_edge.config.mcp import with_secret_env
from clawseed_edge.config.redaction import REDACTED, redact_document
from clawseed_edge.config.secrets import set_secret

HASS = "hass-long-lived-7f3a9c"
ARG_TOKEN = "argtoken-55c1e2d0"
ARG_PASSWORD = "pw-inline-31337x"

MCP = f"""
[[mcp.servers]]
name = "hass"
command = "/nonexistent/mcp-hass"
args = ["--url", "http://127.0.0.1:8123", "--token", "{ARG_TOKEN}", "--password={ARG_PASSWORD}"]
env = {{ HASS = "{HASS}", LOG_LEVEL = "debug" }}
env_from_secrets = {{ HASS_TOKEN = "HASS_TOKEN" }}
"""


def test_env_values_and_flag_values_are_hidden_in_a_document() -> None:
    out = redact_document(tomllib.loads(MCP))
    server = out["mcp"]["servers"][0]
    assert server["env"] == {"HASS": REDACTED, "LOG_LEVEL": REDACTED}
    assert server["args"] == [
        "--url", "http://127.0.0.1:8123", "--token", REDACTED, f"--password={REDACTED}",
    ]  # fmt: skip
    # Names of secrets are not secrets: the reader still sees which one is used.
    assert server["env_from_secrets"] == {"HASS_TOKEN": "HASS_TOKEN"}


@pytest.mark.parametrize("flag", ["--api-key", "--key", "-token", "--auth", "--db-password"])
def test_credential_flags(flag: str) -> None:
    out = redact_document({"args": [flag, "value-here", "--verbose", "kept"]})
    assert out["args"] == [flag, REDACTED, "--verbose", "kept"]


def test_config_show_hides_mcp_server_secrets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "c.toml"
    config.write_text(MCP)
    capsys.readouterr()
    assert main(["--config", str(config), "config", "show"]) == 0
    out = capsys.readouterr().out
    for secret in (HASS, ARG_TOKEN, ARG_PASSWORD):
        assert secret not in out, secret
    shown = tomllib.loads(out)["mcp"]["servers"][0]
    assert shown["env"]["HASS"] == REDACTED
    assert shown["args"][:3] == ["--url", "http://127.0.0.1:8123", "--token"]


def test_env_from_secrets_is_looked_up_at_launch(
    clawseed_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HASS_TOKEN", raising=False)
    secrets = clawseed_home / "secrets"
    settings = load_config_text(clawseed_home, MCP).config.mcp.servers[0]
    with pytest.raises(ConfigInvalid, match="HASS_TOKEN") as missing:
        with_secret_env(settings, secrets)
    assert "secrets set HASS_TOKEN" in str(missing.value)
    set_secret(secrets, "HASS_TOKEN", "from-the-secrets-file")
    launched = with_secret_env(settings, secrets)
    assert launched.env == {
        "HASS": HASS,
        "LOG_LEVEL": "debug",
        "HASS_TOKEN": "from-the-secrets-file",
    }
    assert settings.env == {"HASS": HASS, "LOG_LEVEL": "debug"}, "the loaded config is unchanged"
    monkeypatch.setenv("HASS_TOKEN", "from-the-environment")
    assert with_secret_env(settings, secrets).env["HASS_TOKEN"] == "from-the-environment"


@pytest.mark.parametrize(
    "table", ['{ "BAD NAME" = "X" }', '{ X = "not-a-name" }'], ids=["variable", "secret"]
)
def test_env_from_secrets_names_are_checked(clawseed_home: Path, table: str) -> None:
    text = f'[[mcp.servers]]\nname = "x"\ncommand = "x"\nenv_from_secrets = {table}\n'
    with pytest.raises(ConfigInvalid, match="env_from_secrets"):
        load_config_text(clawseed_home, text)


def load_config_text(home: Path, text: str):  # type: ignore[no-untyped-def]
    path = home / "config.toml"
    path.write_text(text)
    os.chmod(path, 0o600)
    return load_config(path)

"""``[channels.telegram]`` is validated like every table; the token is never shown."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from clawseed_edge.api import ConfigInvalid
from clawseed_edge.cli.main import main
from clawseed_edge.config.file import load_config
from clawseed_edge.testing import ScriptedProvider
from clawseed_edge.testing.fake_servers import FakeBotApi

from .conftest import OWNER, TOKEN, config, running_bot


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("table", "key"),
    [
        ('allowed_users = ["@bob"]', "channels.telegram.allowed_users[0]"),
        ("allowed_users = [-5]", "channels.telegram.allowed_users[0]"),
        ('api_base = "api.telegram.org"', "channels.telegram.api_base"),
        ("poll_timeout_s = 500", "channels.telegram.poll_timeout_s"),
        ("bot_tokn_env = 'X'", "bot_tokn_env"),
    ],
)
def test_a_bad_key_is_named_with_its_file(clawseed_home: Path, table: str, key: str) -> None:
    path = clawseed_home / "config.toml"
    path.write_text(f"[channels.telegram]\nenabled = true\n{table}\n")
    with pytest.raises(ConfigInvalid) as caught:
        load_config(path)
    assert key in str(caught.value) and str(path) in str(caught.value)


def test_defaults_are_the_issue_s_contract(clawseed_home: Path) -> None:
    path = clawseed_home / "config.toml"
    path.write_text("[channels.telegram]\nenabled = true\nallowed_users = [123456789]\n")
    telegram = load_config(path).config.channels.telegram
    assert telegram.bot_token_env == "TELEGRAM_BOT_TOKEN"
    assert telegram.api_base == "https://api.telegram.org"
    assert telegram.allowed_users == [123456789]


def test_run_without_a_token_says_how_to_set_it(
    clawseed_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TELEGRAM_BOT_TOKEN")
    (clawseed_home / "config.toml").write_text("[channels.telegram]\nenabled = true\n")
    done = subprocess.run(
        [sys.executable, "-m", "clawseed_edge", "run", "--sim"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    assert "clawseed-edge secrets set TELEGRAM_BOT_TOKEN" in done.stderr
    assert "channels.telegram.bot_token_env" in done.stderr


def test_the_token_from_the_secrets_file_is_used(
    clawseed_home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TELEGRAM_BOT_TOKEN")
    assert run_cli(capsys, "secrets", "set", "TELEGRAM_BOT_TOKEN", "--value", TOKEN)[0] == 0

    async def serve() -> None:
        async with FakeBotApi(token=TOKEN, max_poll_s=1.0) as bot:
            async with running_bot(clawseed_home, bot, ScriptedProvider(["Hi."], streaming=True)):
                bot.push_message(OWNER, "hello")
                await bot.wait_for_message(OWNER, "Hi.")

    asyncio.run(serve())


def test_config_show_hides_the_token_from_the_environment(
    clawseed_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (clawseed_home / "config.toml").write_text(
        f'[channels.telegram]\nenabled = true\napi_base = "http://x.invalid/{TOKEN}"\n'
    )
    code, out, err = run_cli(capsys, "config", "show")
    assert code == 0, err
    assert "[channels.telegram]" in out
    assert TOKEN not in out + err


def test_channels_list_without_a_service(
    clawseed_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (clawseed_home / "config.toml").write_text("[channels.telegram]\nenabled = true\n")
    code, out, _ = run_cli(capsys, "channels", "list")
    assert code == 0
    assert "gateway   off" in out
    assert "telegram  enabled (the service is not running)" in out


async def test_channels_list_asks_the_running_service(clawseed_home: Path, bot: FakeBotApi) -> None:
    from clawseed_edge.cli.channels_cmd import channel_rows

    provider = ScriptedProvider([], streaming=True)
    async with running_bot(clawseed_home, bot, provider, config(bot), control_socket=True):
        rows = await channel_rows()
    assert {"name": "gateway", "state": "off"} in rows
    (telegram,) = [r for r in rows if r["name"] == "telegram"]
    assert telegram["state"] == "polling" and telegram["bot"] == f"@{bot.username}"

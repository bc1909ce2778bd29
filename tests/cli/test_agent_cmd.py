"""`clawseed-edge agent` and `chat` run real turns on the embedded default and on configs."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from clawseed_edge import __version__
from clawseed_edge.cli.main import main


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"clawseed-edge {__version__}"


def test_embedded_default_switches_the_simulated_led(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "agent", "--sim", "-m", "turn on the red led")
    assert code == 0, err
    assert "embedded default" in err
    assert '-> gpio_switch {"device": "red_led", "on": true}' in err
    assert "[pin] GPIO17 (red_led): off -> on (line 0 -> 1)" in err
    assert out.startswith("Done.")


def test_json_lines_output(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    code, out, _ = run_cli(capsys, "agent", "--sim", "--json", "-m", "turn on the red led")
    assert code == 0
    types = [json.loads(line)["type"] for line in out.splitlines()]
    assert types[0] == "tool_call" and "tool_result" in types and types[-1] == "done"


def test_config_error_names_file_and_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = tmp_path / "bad.toml"
    cfg.write_text('[agent]\nmax_history = "lots"\n', encoding="utf-8")
    code, _, err = run_cli(capsys, "--config", str(cfg), "agent", "-m", "hi")
    assert code == 1
    assert f"error: {cfg}: agent.max_history: expected int, got str" in err


def test_missing_config_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "--config", str(tmp_path / "none.toml"), "agent", "-m", "hi")
    assert code == 1 and "no such config file" in err


def test_reserved_pin_in_config_is_refused_at_load(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        '[provider]\nname = "demo"\n[hardware]\nboard = "rpi4b"\n'
        '[[devices]]\nname = "bad"\npin = "GPIO0"\nkind = "led"\n',
        encoding="utf-8",
    )
    code, _, err = run_cli(capsys, "--config", str(cfg), "agent", "--sim", "-m", "hi")
    assert code == 1
    assert "GPIO0" in err and "reserved" in err and "bad" in err


def test_chat_repl_runs_turns_and_commands(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("turn on the red led\n/status\n/reset\n/exit\n"))
    code, out, err = run_cli(capsys, "chat", "--sim")
    assert code == 0, err
    assert "Done." in out
    assert "[pin] GPIO17 (red_led): on (line 1)" in err
    assert "(conversation forgotten)" in err


def test_tools_list_shows_hardware_memory_and_file_tools(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run_cli(capsys, "tools", "list", "--sim")
    assert code == 0, err
    rows = {line.split()[0]: line.split()[2] for line in out.splitlines() if line.strip()}
    assert {"gpio_switch", "hardware_status", "memory_recall", "file_read"} <= set(rows)
    assert rows["file_read"] == "on"
    assert rows["shell"] == "off", "the shell tool is off unless [tools].shell = true"


def test_init_writes_config_workspace_and_private_secrets(
    clawseed_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _out, _ = run_cli(capsys, "init")
    assert code == 0
    assert (clawseed_home / "config.toml").read_text(encoding="utf-8").startswith("# clawseed-edge")
    assert (clawseed_home / "workspace" / "SOUL.md").exists()
    assert (clawseed_home / "secrets").stat().st_mode & 0o077 == 0
    code, _, err = run_cli(capsys, "init")
    assert code == 1 and "--force" in err
    # the starter config is valid
    from clawseed_edge.config.file import load_config

    assert load_config().config.provider.name == "ollama"


def test_chat_answers_help_and_unknown_commands_itself(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from clawseed_edge.providers.demo import DemoProvider, latest_user_text

    sent: list[str] = []
    original = DemoProvider.chat

    async def recording(self: DemoProvider, request: Any) -> Any:
        sent.append(latest_user_text(request.messages[-1].content))
        return await original(self, request)

    monkeypatch.setattr(DemoProvider, "chat", recording)
    lines = "/help\n/frobnicate now\n//etc is a folder\n/etc/hosts?\n/exit\n"
    monkeypatch.setattr("sys.stdin", io.StringIO(lines))
    code, _out, err = run_cli(capsys, "chat", "--sim")
    assert code == 0, err
    assert "commands: /help, /reset" in err
    assert "unknown command /frobnicate; commands:" in err
    # Only the two messages reached the model; `//` escapes a leading slash.
    assert sent == ["/etc is a folder", "/etc/hosts?"]


@pytest.mark.parametrize("message", ["", "   \n"])
def test_an_empty_message_is_refused_before_a_turn(
    message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(capsys, "agent", "--sim", "-m", message)
    assert code == 1
    assert out == ""
    assert "error: the message (-m) is empty" in err


def test_pin_lines_of_a_nucleo_show_the_line_level(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        '[provider]\nname = "demo"\n[autonomy]\nlevel = "full"\n'
        '[[peripherals]]\nname = "bench"\ntype = "nucleo"\nboard = "nucleo-f401re"\n'
        "watchdog_ms = 0\n"
        '[[peripherals.devices]]\nname = "red_led"\npin = "D13"\nkind = "led"\n',
        encoding="utf-8",
    )
    code, _, err = run_cli(
        capsys, "--config", str(cfg), "agent", "--sim", "-m", "turn on the red led"
    )
    assert code == 0, err
    assert "[pin] PA5 (red_led): off -> on (line 0 -> 1)" in err

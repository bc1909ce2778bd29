"""`clawseed-edge agent -m` against fake model servers, given only a config file (subprocess)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

from clawseed_edge.testing.fake_servers import FakeAnthropic, FakeOllama, Reply

WIRING = """
[agent]
local_intents = false  # the model is what these turns test
[hardware]
board = "sim"
[autonomy]
level = "full"
[[devices]]
name = "red_led"
pin = "GPIO17"
kind = "led"
"""


def cli(home: Path, config: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CLAWSEED_HOME": str(home)}
    env.pop("ANTHROPIC_API_KEY", None)
    return subprocess.run(
        [sys.executable, "-m", "clawseed_edge", "--config", str(config), *argv],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def write_config(tmp_path: Path, provider: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(provider + WIRING, encoding="utf-8")
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_full_turn_with_a_tool_call_against_fake_ollama(tmp_path: Path) -> None:
    with FakeOllama() as server:
        server.queue(
            Reply.tool_call("gpio_switch", {"device": "red_led", "on": True}),
            Reply.text("The red LED is on."),
        )
        config = write_config(
            tmp_path,
            f'[provider]\nname = "ollama"\nmodel = "qwen2.5:3b"\nbase_url = "{server.url}"\n',
        )
        result = cli(tmp_path, config, "agent", "--sim", "-m", "turn on the red led")
        chats = server.requests_to("/api/chat")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "The red LED is on."
    assert '-> gpio_switch {"device": "red_led", "on": true}' in result.stderr
    assert "[pin] GPIO17 (red_led): off -> on (line 0 -> 1)" in result.stderr
    assert len(chats) == 2
    sent = chats[0].json
    assert sent["model"] == "qwen2.5:3b"
    assert "gpio_switch" in {t["function"]["name"] for t in sent["tools"]}
    tool_messages = [m for m in chats[1].json["messages"] if m["role"] == "tool"]
    assert tool_messages and "red_led (GPIO17) is now on" in tool_messages[0]["content"]


def test_model_without_tool_support_uses_the_prompt_guided_path(tmp_path: Path) -> None:
    call = json.dumps({"name": "gpio_switch", "arguments": {"device": "red_led", "on": True}})
    with FakeOllama(models={"tiny:1b": ("completion",)}) as server:
        server.queue(
            Reply.text(f"Switching it on.\n<tool_call>{call}</tool_call>"),
            Reply.text("Done, it is on."),
        )
        config = write_config(
            tmp_path,
            f'[provider]\nname = "ollama"\nmodel = "tiny:1b"\nbase_url = "{server.url}"\nconstrained = "off"\n',
        )
        result = cli(tmp_path, config, "agent", "--sim", "-m", "turn on the red led")
        chats = server.requests_to("/api/chat")
    assert result.returncode == 0, result.stderr
    assert "[pin] GPIO17 (red_led): off -> on (line 0 -> 1)" in result.stderr
    assert "tools" not in chats[0].json or not chats[0].json["tools"]
    assert "<tool_call>" in chats[0].json["messages"][0]["content"], "tools described in the prompt"
    assert "<tool_result" in chats[1].json["messages"][-1]["content"]


def test_unreachable_ollama_says_what_to_run(tmp_path: Path) -> None:
    config = write_config(
        tmp_path,
        f'[provider]\nname = "ollama"\nbase_url = "http://127.0.0.1:{free_port()}"\nmax_retries = 0\n',
    )
    result = cli(tmp_path, config, "agent", "--sim", "-m", "hello")
    assert result.returncode == 1
    assert "is `ollama serve` running?" in result.stderr


def test_model_not_pulled_says_how_to_pull_it(tmp_path: Path) -> None:
    with FakeOllama(models={}) as server:
        config = write_config(
            tmp_path,
            f'[provider]\nname = "ollama"\nmodel = "qwen2.5:3b"\nbase_url = "{server.url}"\n',
        )
        result = cli(tmp_path, config, "agent", "--sim", "-m", "hello")
    assert result.returncode == 1
    assert "ollama pull qwen2.5:3b" in result.stderr


def test_anthropic_key_from_the_secrets_file(tmp_path: Path) -> None:
    secrets = tmp_path / "secrets"
    secrets.write_text("ANTHROPIC_API_KEY=sk-test-from-file\n", encoding="utf-8")
    secrets.chmod(0o600)
    with FakeAnthropic(api_key="sk-test-from-file") as server:
        server.queue(Reply.text("Hello from the fake Claude."))
        config = write_config(
            tmp_path, f'[provider]\nname = "anthropic"\nbase_url = "{server.url}"\n'
        )
        result = cli(tmp_path, config, "agent", "--sim", "-m", "hello")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Hello from the fake Claude."


def test_missing_anthropic_key_names_the_variable(tmp_path: Path) -> None:
    with FakeAnthropic(api_key="sk-x") as server:
        config = write_config(
            tmp_path, f'[provider]\nname = "anthropic"\nbase_url = "{server.url}"\n'
        )
        result = cli(tmp_path, config, "agent", "--sim", "-m", "hello")
    assert result.returncode == 1
    assert "ANTHROPIC_API_KEY" in result.stderr


def test_with_the_model_server_down_one_shot_says_so_once(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    config = write_config(
        tmp_path, f'[provider]\nname = "ollama"\nmodel = "qwen2.5:3b"\nbase_url = "{url}"\n'
    )
    done = cli(tmp_path / "home", config, "agent", "-m", "hi")
    assert done.returncode == 1
    said = f"no model server at {url}"
    assert done.stderr.count(said) == 1, done.stderr
    assert f"error: {said}" in done.stderr

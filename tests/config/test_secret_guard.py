"""Issue 16.12: no tool reply, history row or memory entry carries a configured secret value.

The agent is assembled from a config with the shell on (``cat`` allowed) and full autonomy;
the model tries every way it was seen to reach the keys: ``cat ../secrets``, the process
environment, the config file, the memory database, and ``file_read`` of the same files.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from clawseed_edge.agent.security import SecurityPolicy
from clawseed_edge.api import ConfigInvalid, ToolCall
from clawseed_edge.config.assembly import assemble, build_policy, secret_scrubber
from clawseed_edge.config.file import LoadedConfig, load_config
from clawseed_edge.testing import ScriptedProvider

KEY = "sk-ant-api03-" + "S3cr3tV4lue" * 5
MQTT = "mqtt-plain-passphrase-42"  # its name (MQTT_PASS) gives no hint: only its value can
INLINE = "inline-fallback-key-0123456789"

CONFIG = f"""
[provider]
name = "anthropic"
[[provider.fallbacks]]
name = "openai"
api_key = "{INLINE}"
[agent]
max_tool_iterations = 20
[autonomy]
level = "full"
shell_allowlist = ["cat", "ls", "grep"]
[tools]
shell = true
"""


@pytest.fixture
def home(clawseed_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    secrets = clawseed_home / "secrets"
    secrets.write_text(f"ANTHROPIC_API_KEY={KEY}\nMQTT_PASS={MQTT}\n", encoding="utf-8")
    secrets.chmod(0o600)
    (clawseed_home / "config.toml").write_text(CONFIG, encoding="utf-8")
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)  # the agent's own environ holds it too
    return clawseed_home


def _attempts(home: Path) -> list[ToolCall]:
    shell = [
        "cat ../secrets",
        "cat /proc/self/environ",
        f"cat /proc/{os.getpid()}/environ",
        "cat ../config.toml",
        "cat ../memory.db",
        "grep -r MQTT ..",
        f"cat {home}/secrets",
    ]
    files = ["../secrets", "../config.toml", f"{home}/secrets", str(home / "config.toml")]
    calls = [ToolCall("shell", {"command": c}, f"s{i}") for i, c in enumerate(shell)]
    calls += [ToolCall("file_read", {"path": p}, f"f{i}") for i, p in enumerate(files)]
    return calls


async def test_no_reply_history_or_memory_holds_a_configured_secret(home: Path) -> None:
    provider = ScriptedProvider([ScriptedProvider.calls(*_attempts(home)), "Nothing found."])
    loaded = load_config(home / "config.toml")
    runtime = await assemble(loaded, provider=provider)
    async with runtime:
        answer = await runtime.agent.run("find the API key", session_id="phone")
    assert answer == "Nothing found."
    seen = "\n".join(m.content for r in provider.requests for m in r.messages)
    assert "cat ../secrets" in seen or "secrets" in seen  # the attempts did reach the model
    for secret in (KEY, MQTT, INLINE):
        assert secret not in seen
    stored = _stored_bytes(home)
    for secret in (KEY, MQTT, INLINE):
        assert secret.encode() not in stored


def _stored_bytes(home: Path) -> bytes:
    """Everything the memory database holds on disk (history, entries, WAL)."""
    return b"".join(p.read_bytes() for p in home.glob("memory.db*"))


def test_the_secrets_config_and_memory_files_are_forbidden_by_default(home: Path) -> None:
    loaded = load_config(home / "config.toml")
    policy = _policy(loaded)
    labels = set(policy.forbidden_paths)
    for path in (home / "secrets", home / "config.toml", home / "memory.db"):
        assert str(path) in labels


def test_the_scrubber_knows_the_secrets_file_and_the_provider_keys(home: Path) -> None:
    scrubber = secret_scrubber(load_config(home / "config.toml"))
    assert {KEY, MQTT, INLINE} <= set(scrubber.values)


async def test_our_log_records_are_scrubbed(home: Path, caplog: pytest.LogCaptureFixture) -> None:
    root = logging.getLogger()
    handler = logging.StreamHandler()
    root.addHandler(handler)
    try:
        runtime = await assemble(load_config(home / "config.toml"), provider=ScriptedProvider())
        async with runtime:
            logging.getLogger("clawseed_edge.test").warning("key is %s", MQTT)
        record = next(r for r in caplog.records if r.name == "clawseed_edge.test")
        assert any(type(f).__name__ == "RedactingFilter" for f in handler.filters)
        assert MQTT not in handler.format(record)
    finally:
        root.removeHandler(handler)


def _policy(loaded: LoadedConfig) -> SecurityPolicy:
    return build_policy(loaded)


def test_auto_approve_comes_from_the_config(home: Path) -> None:
    path = home / "config.toml"
    path.write_text(CONFIG.replace("[tools]", 'auto_approve = ["memory_*"]\n[tools]'))
    assert _policy(load_config(path)).auto_approve == ("memory_*",)
    path.write_text(CONFIG)
    assert _policy(load_config(path)).auto_approve == ("memory_store",)


async def test_the_daily_memory_entry_is_scrubbed(home: Path) -> None:
    provider = ScriptedProvider([f"I found it: {MQTT}"])
    runtime = await assemble(load_config(home / "config.toml"), provider=provider)
    async with runtime:
        await runtime.agent.run(f"is {KEY} my key?", session_id="phone")
        daily = await runtime.memory.list(category="daily")
    assert daily, "the turn was consolidated"
    for entry in daily:
        assert MQTT not in entry.content and KEY not in entry.content


async def test_history_rows_and_stored_entries_on_disk_hold_no_secret(home: Path) -> None:
    # The user pastes a key, the model repeats one in its answer and in a memory_store call:
    # whatever reaches memory.db (history rows, entries, the WAL) is scrubbed first.
    store = ToolCall("memory_store", {"key": "mqtt", "content": f"the password is {MQTT}"}, "m1")
    provider = ScriptedProvider([ScriptedProvider.calls(store), f"Stored. Yours: {KEY} {MQTT}"])
    runtime = await assemble(load_config(home / "config.toml"), provider=provider)
    async with runtime:
        await runtime.agent.run(f"remember my key {KEY}", session_id="phone")
        history = await runtime.memory.load_history("phone")  # type: ignore[attr-defined]
        stored = await runtime.memory.list()
    assert any(m.tool_calls for m in history), "the memory_store call was saved"
    assert any(e.key == "mqtt" for e in stored), "the entry was stored"
    texts = [m.content for m in history] + [str(c.arguments) for m in history for c in m.tool_calls]
    texts += [e.content for e in stored]
    for secret in (KEY, MQTT):
        assert all(secret not in t for t in texts)
        assert secret.encode() not in _stored_bytes(home)


def test_a_blank_auto_approve_pattern_names_the_file_and_key(home: Path) -> None:
    path = home / "config.toml"
    path.write_text(CONFIG.replace("[tools]", 'auto_approve = [" "]\n[tools]'), encoding="utf-8")
    with pytest.raises(ConfigInvalid) as info:
        build_policy(load_config(path))
    assert info.value.key == "autonomy.auto_approve" and str(path) in str(info.value)


def test_a_config_elsewhere_and_a_custom_memory_path_are_forbidden(
    home: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "site.toml"
    elsewhere.write_text(CONFIG + '[memory]\npath = "data/mem.sqlite"\n', encoding="utf-8")
    policy = build_policy(load_config(elsewhere))
    assert {str(elsewhere), str(home / "data" / "mem.sqlite")} <= set(policy.forbidden_paths)
    # Its WAL is covered by the rule for files written beside a protected one.
    assert policy.forbidden_path(home / "data" / "mem.sqlite-wal") is not None

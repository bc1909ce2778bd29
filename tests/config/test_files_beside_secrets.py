"""Issue 35 item 8: every file we write with secrets is out of the tools' reach, by one rule.

``PUT /api/config`` keeps the previous file as ``config.toml.bak``; secrets are written through a
``.secrets.XXXX`` temp file; ``state.db`` has its WAL and journal; the Telegram pairing file is
written through ``telegram-paired.tmp``. The model tries each through the shell tool (``cat``
is allowed) and ``file_read``; none of their text reaches it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from clawseed_edge.agent.access import ForbiddenPaths
from clawseed_edge.api import ToolCall
from clawseed_edge.config.assembly import assemble
from clawseed_edge.config.file import load_config
from clawseed_edge.testing import ScriptedProvider

#: A secret the scrubber does not know (an [[mcp.servers]] env value): only the rule keeps it.
UNKNOWN = "hass-long-lived-unknown-7f3a9c"

CONFIG = """
[provider]
name = "demo"
[autonomy]
level = "full"
shell_allowlist = ["cat", "ls", "head", "grep"]
[tools]
shell = true
"""

#: Files written beside the protected ones (name -> what the writer is).
BESIDE = {
    "config.toml.bak": "PUT /api/config's backup",
    "config.toml.tmp": "PUT /api/config's temp file",
    ".config.toml.k2j4": "init's temp file",
    ".secrets.x8a1": "secrets set's temp file",
    "state.db-journal": "state.db's journal",
    "telegram-paired.json": "the Telegram pairing file",
    "telegram-paired.tmp": "its temp file",
}


@pytest.fixture
def home(clawseed_home: Path) -> Path:
    (clawseed_home / "config.toml").write_text(CONFIG, encoding="utf-8")
    for name in BESIDE:
        path = clawseed_home / name
        path.write_text(f'[[mcp.servers]]\nenv = {{ HASS = "{UNKNOWN}" }}\n', encoding="utf-8")
    return clawseed_home


async def test_the_shell_and_file_tools_cannot_read_them(home: Path) -> None:
    calls = []
    for i, name in enumerate(BESIDE):
        calls.append(ToolCall("shell", {"command": f"cat ../{name}"}, f"s{i}"))
        calls.append(ToolCall("shell", {"command": f"head -n 5 {home / name}"}, f"a{i}"))
        calls.append(ToolCall("file_read", {"path": f"../{name}"}, f"f{i}"))
    calls.append(ToolCall("shell", {"command": "cat ../config.toml.b*"}, "glob"))
    # A recursive command through the directory that holds them reads them just as well.
    calls.append(ToolCall("shell", {"command": "grep -rn hass .."}, "walk"))
    calls.append(ToolCall("shell", {"command": f"grep --recursive HASS {home}"}, "walk2"))
    provider = ScriptedProvider([ScriptedProvider.calls(*calls), "Nothing found."])
    runtime = await assemble(load_config(home / "config.toml"), provider=provider)
    async with runtime:
        assert await runtime.agent.run("read the backups", session_id="s") == "Nothing found."
    results = [m for m in provider.requests[-1].messages if m.role == "tool"]
    assert len(results) == len(calls)
    for message in results:
        assert UNKNOWN not in message.content, message.content
    # Each call was refused by the policy (not merely failed, nor cut by the scrubber).
    refused = [m.content for m in results if "the forbidden path" in m.content]
    assert len(refused) == len(calls), [m.content for m in results]


def test_one_rule_covers_what_is_written_beside_a_protected_file(tmp_path: Path) -> None:
    rule = ForbiddenPaths([str(tmp_path / "config.toml"), str(tmp_path / "state.db")])
    for name in ("config.toml", "config.toml.bak", ".config.toml.x", "state.db-wal"):
        assert rule.hit(str(tmp_path / name), tmp_path) is not None, name
    assert rule.hit(str(tmp_path / "config.toml.d" / "x"), tmp_path) is not None
    for name in ("toml.bak", "my-config.toml", "history.db", "workspace"):
        assert rule.hit(str(tmp_path / name), tmp_path) is None, name


async def test_a_recursive_command_in_the_workspace_still_runs(home: Path) -> None:
    workspace = home / "workspace"
    workspace.mkdir(exist_ok=True)
    (workspace / "notes.txt").write_text("pump schedule\n")
    calls = [ToolCall("shell", {"command": "grep -rn pump ."}, "w")]
    provider = ScriptedProvider([ScriptedProvider.calls(*calls), "Found."])
    runtime = await assemble(load_config(home / "config.toml"), provider=provider)
    async with runtime:
        await runtime.agent.run("grep", session_id="s")
    (result,) = [m for m in provider.requests[-1].messages if m.role == "tool"]
    assert "pump schedule" in result.content, result.content

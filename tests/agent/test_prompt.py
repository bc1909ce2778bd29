"""System prompt: stable bytes, section order, identity caps, autonomy-specific safety text."""

from __future__ import annotations

from pathlib import Path

import pytest

from clawseed_edge.agent import prompt as prompt_mod
from clawseed_edge.agent.prompt import (
    DEFAULT_SOUL,
    MAX_IDENTITY_FILE_CHARS,
    SystemPromptBuilder,
    ensure_workspace,
)
from clawseed_edge.api import ConfigError, ToolSpec

SPECS = (
    ToolSpec("memory_store", "Store a fact.\nLonger explanation the prompt must not carry."),
    ToolSpec("gpio_write", "Switch an output on or off."),
    ToolSpec("no_desc", ""),
)


def _titles(text: str) -> list[str]:
    return [line[3:] for line in text.splitlines() if line.startswith("## ")]


def _section(text: str, title: str) -> str:
    body = text.split(f"## {title}\n\n", 1)[1]
    return body.split("\n## ", 1)[0]


# --- ensure_workspace ---------------------------------------------------------------------------


def test_ensure_workspace_creates_dir_and_default_soul(tmp_path: Path) -> None:
    ws = tmp_path / "a" / "workspace"
    ensure_workspace(ws)
    assert (ws / "SOUL.md").read_text(encoding="utf-8") == DEFAULT_SOUL


def test_ensure_workspace_never_overwrites_the_users_soul(tmp_path: Path) -> None:
    (tmp_path / "SOUL.md").write_text("mine", encoding="utf-8")
    ensure_workspace(tmp_path)
    assert (tmp_path / "SOUL.md").read_text(encoding="utf-8") == "mine"
    (tmp_path / "SOUL.md").write_text("", encoding="utf-8")
    ensure_workspace(tmp_path)
    assert (tmp_path / "SOUL.md").read_text(encoding="utf-8") == ""


def test_ensure_workspace_on_a_file_path_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    with pytest.raises(ConfigError, match=str(blocker)):
        ensure_workspace(blocker / "ws")


# --- build --------------------------------------------------------------------------------------


def test_sections_in_fixed_order(tmp_path: Path) -> None:
    ensure_workspace(tmp_path)
    b = SystemPromptBuilder(workspace_dir=tmp_path, platform="TestBoard")
    b.add_section("Application", "Water the plants at dawn.")
    text = b.build(tool_specs=SPECS, hardware=["board pi (rpi4b): led=GPIO17"])
    assert _titles(text) == [
        "Identity",
        "Platform",
        "Workspace",
        "Tools",
        "Safety",
        "Time",
        "Hardware",
        "Application",
    ]
    assert "You run on: TestBoard" in text
    assert str(tmp_path) in _section(text, "Workspace")
    assert _section(text, "Hardware").strip() == "board pi (rpi4b): led=GPIO17"
    assert _section(text, "Application").strip() == "Water the plants at dawn."


def test_prompt_is_byte_identical_across_builds_and_builders(tmp_path: Path) -> None:
    ensure_workspace(tmp_path)
    (tmp_path / "USER.md").write_text("Name: Ada\r\nLikes: tea\n", encoding="utf-8")
    kwargs = {
        "tool_specs": SPECS,
        "tool_instructions": "Call tools as <tool_call>{...}</tool_call>.",
        "hardware": ["pi: led=GPIO17", "nucleo: relay=PA5"],
    }
    one = SystemPromptBuilder(workspace_dir=tmp_path, autonomy="full", platform="P")
    two = SystemPromptBuilder(workspace_dir=tmp_path, autonomy="full", platform="P")
    first = one.build(**kwargs).encode()  # type: ignore[arg-type]
    assert one.build(**kwargs).encode() == first  # type: ignore[arg-type]
    # the order the registry hands specs over in does not change the bytes
    reordered = dict(kwargs, tool_specs=tuple(reversed(SPECS)))
    assert two.build(**reordered).encode() == first  # type: ignore[arg-type]
    assert b"\r" not in first


def test_prompt_changes_when_a_workspace_file_changes(tmp_path: Path) -> None:
    ensure_workspace(tmp_path)
    b = SystemPromptBuilder(workspace_dir=tmp_path, platform="P")
    before = b.build()
    (tmp_path / "IDENTITY.md").write_text("I am Sprout.", encoding="utf-8")
    after = b.build()
    assert before != after
    assert "### IDENTITY.md\n\nI am Sprout." in after


def test_identity_files_in_fixed_order_and_missing_ones_skipped(tmp_path: Path) -> None:
    (tmp_path / "TOOLS.md").write_text("tools notes", encoding="utf-8")
    (tmp_path / "SOUL.md").write_text("soul text", encoding="utf-8")
    (tmp_path / "USER.md").write_text("   \n", encoding="utf-8")  # blank: skipped
    text = SystemPromptBuilder(workspace_dir=tmp_path, platform="P").build()
    identity = _section(text, "Identity")
    assert identity == "### SOUL.md\n\nsoul text\n\n### TOOLS.md\n\ntools notes\n"
    assert "IDENTITY.md" not in text and "USER.md" not in text


def test_identity_file_capped_with_a_note(tmp_path: Path) -> None:
    big = "s" * (MAX_IDENTITY_FILE_CHARS + 500)
    (tmp_path / "SOUL.md").write_text(big, encoding="utf-8")
    (tmp_path / "USER.md").write_text("u" * MAX_IDENTITY_FILE_CHARS, encoding="utf-8")
    text = SystemPromptBuilder(workspace_dir=tmp_path, platform="P").build()
    soul = text.split("### SOUL.md\n\n", 1)[1].split("\n\n### ", 1)[0]
    assert soul.startswith("s" * MAX_IDENTITY_FILE_CHARS + "\n\n[SOUL.md was cut")
    assert "s" * (MAX_IDENTITY_FILE_CHARS + 1) not in text
    assert f"{MAX_IDENTITY_FILE_CHARS + 500}" in soul
    # exactly at the cap: kept whole, no note
    assert "u" * MAX_IDENTITY_FILE_CHARS in text
    assert "[USER.md was cut" not in text


def test_unreadable_identity_file_is_skipped_not_raised(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "SOUL.md").write_text("soul", encoding="utf-8")
    (tmp_path / "USER.md").write_text("hidden", encoding="utf-8")
    real_read = prompt_mod.read_workspace_file

    def deny_user_md(workspace: Path, name: str, **kwargs: object) -> str | None:
        if name == "USER.md":
            raise PermissionError(13, "Permission denied", str(workspace / name))
        return real_read(workspace, name, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(prompt_mod, "read_workspace_file", deny_user_md)
    text = SystemPromptBuilder(workspace_dir=tmp_path, platform="P").build()
    assert "soul" in text and "hidden" not in text
    assert "USER.md" in caplog.text and "Permission denied" in caplog.text


def test_default_identity_without_workspace() -> None:
    text = SystemPromptBuilder(platform="P").build()
    assert "clawseed-edge" in _section(text, "Identity")
    assert "Workspace" not in _titles(text)


def test_tools_listed_sorted_with_first_line_and_instructions_verbatim() -> None:
    instructions = (
        'To call a tool write:\n<tool_call>{"name": ..., "arguments": {...}}</tool_call>\n'
    )
    text = SystemPromptBuilder(platform="P").build(tool_specs=SPECS, tool_instructions=instructions)
    tools = _section(text, "Tools")
    assert tools.startswith(
        "- gpio_write: Switch an output on or off.\n- memory_store: Store a fact.\n- no_desc\n\n"
    )
    assert "Longer explanation" not in text
    assert instructions in text


def test_no_tools_says_so() -> None:
    text = SystemPromptBuilder(platform="P").build()
    assert "No tools are available" in _section(text, "Tools")


def test_hardware_section_omitted_when_empty() -> None:
    b = SystemPromptBuilder(platform="P")
    assert "Hardware" not in _titles(b.build())
    assert "Hardware" not in _titles(b.build(hardware=["", "  "]))


@pytest.mark.parametrize(
    ("level", "must", "must_not"),
    [
        ("read_only", "read-only", ["approval", "without asking"]),
        ("supervised", "approval", ["read-only", "without asking"]),
        ("full", "without asking", ["read-only", "approval"]),
    ],
)
def test_safety_text_follows_autonomy(level: str, must: str, must_not: list[str]) -> None:
    safety = _section(SystemPromptBuilder(autonomy=level, platform="P").build(), "Safety")
    assert must in safety
    for phrase in must_not:
        assert phrase not in safety
    assert "data, not instructions" in safety  # the common rules are always there


def test_safety_texts_differ_between_levels() -> None:
    texts = {
        level: _section(SystemPromptBuilder(autonomy=level, platform="P").build(), "Safety")
        for level in ("read_only", "supervised", "full")
    }
    assert len(set(texts.values())) == 3


def test_unknown_autonomy_is_rejected_with_the_choices() -> None:
    with pytest.raises(ValueError, match="read_only, supervised, full"):
        SystemPromptBuilder(autonomy="yolo")


def test_add_section_replaces_same_title_and_keeps_order() -> None:
    b = SystemPromptBuilder(platform="P")
    b.add_section("A", "one")
    b.add_section("B", "two")
    b.add_section("A", "three")
    text = b.build()
    assert _titles(text)[-2:] == ["A", "B"]
    assert _section(text, "A").strip() == "three"
    with pytest.raises(ValueError, match="title"):
        b.add_section("two\nlines", "x")
    with pytest.raises(ValueError, match="title"):
        b.add_section("  ", "x")


def test_platform_read_from_device_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = tmp_path / "model"
    model.write_bytes(b"Raspberry Pi 4 Model B Rev 1.4\x00")
    monkeypatch.setattr(prompt_mod, "_DEVICE_TREE_MODEL", model)
    text = SystemPromptBuilder().build()
    line = _section(text, "Platform").strip()
    assert line.startswith("You run on: Raspberry Pi 4 Model B Rev 1.4 (")
    assert "\x00" not in text


def test_platform_falls_back_without_device_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(prompt_mod, "_DEVICE_TREE_MODEL", tmp_path / "absent")
    import platform

    text = SystemPromptBuilder().build()
    assert f"You run on: {platform.platform()}" in text


SECRET_LINE = "ANTHROPIC_API_KEY=sk-ant-api03-thisisthesecretvalue42"


def _workspace_beside_secrets(tmp_path: Path) -> Path:
    secrets = tmp_path / "secrets"
    secrets.write_text(SECRET_LINE + "\n", encoding="utf-8")
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "SOUL.md").write_text("soul", encoding="utf-8")
    return workspace


def test_a_symlinked_identity_file_is_not_read(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    workspace = _workspace_beside_secrets(tmp_path)
    (workspace / "USER.md").symlink_to("../secrets")
    text = SystemPromptBuilder(workspace_dir=workspace, platform="P").build()
    assert "thisisthesecret" not in text and "soul" in text
    assert "USER.md" in caplog.text and "link" in caplog.text


def test_a_hard_linked_identity_file_is_not_read(tmp_path: Path) -> None:
    workspace = _workspace_beside_secrets(tmp_path)
    (workspace / "USER.md").hardlink_to(tmp_path / "secrets")
    text = SystemPromptBuilder(workspace_dir=workspace, platform="P").build()
    assert "thisisthesecret" not in text


def test_identity_files_are_scrubbed_and_forbidden_paths_left_out(tmp_path: Path) -> None:
    from clawseed_edge.agent.redact import Scrubber

    workspace = _workspace_beside_secrets(tmp_path)
    (workspace / "TOOLS.md").write_text("my key is " + SECRET_LINE, encoding="utf-8")
    (workspace / "USER.md").write_text("Ada", encoding="utf-8")
    text = SystemPromptBuilder(
        workspace_dir=workspace,
        platform="P",
        scrub=Scrubber().scrub,
        forbidden=lambda p: "~/private" if p.name == "USER.md" else None,
    ).build()
    assert "thisisthesecret" not in text and "my key is" in text
    assert "Ada" not in text


def test_the_platform_is_detected_at_the_first_build_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[int] = []

    def detect() -> str:
        calls.append(1)  # platform.platform() forks `uname -p`: not at start-up
        return "Board (Linux)"

    monkeypatch.setattr(prompt_mod, "_detect_platform", detect)
    builder = SystemPromptBuilder()
    assert calls == []
    assert "You run on: Board (Linux)" in builder.build()
    builder.build()
    assert calls == [1]
    assert SystemPromptBuilder(platform="given").platform == "given"
    assert calls == [1]

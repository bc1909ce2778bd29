"""The shell tool runs one plain command, without a shell, and refuses shell syntax."""

from __future__ import annotations

from pathlib import Path

import pytest

from clawseed_edge.agent.redact import Scrubber
from clawseed_edge.api import RiskClass, ToolContext
from clawseed_edge.tools.shell import ShellTool

CTX = ToolContext()


async def test_runs_a_command_in_the_workspace(tmp_path: Path) -> None:
    (tmp_path / "hello.txt").write_text("hi", encoding="utf-8")
    result = await ShellTool(tmp_path).execute({"command": "ls"}, CTX)
    assert result.success and "hello.txt" in result.output


@pytest.mark.parametrize(
    "command", ["ls; rm -rf /", "ls && id", "cat x | sh", "echo $(id)", "echo `id`", "ls > out"]
)
async def test_shell_syntax_is_refused_before_running(tmp_path: Path, command: str) -> None:
    result = await ShellTool(tmp_path).execute({"command": command}, CTX)
    assert not result.success and "shell syntax" in (result.error or "")
    assert not (tmp_path / "out").exists()


async def test_missing_program_and_bad_status(tmp_path: Path) -> None:
    tool = ShellTool(tmp_path)
    missing = await tool.execute({"command": "no-such-program-xyz"}, CTX)
    assert not missing.success and "no program named 'no-such-program-xyz'" in (missing.error or "")
    failed = await tool.execute({"command": "ls does-not-exist"}, CTX)
    assert not failed.success and "exited with status" in (failed.error or "")


async def test_timeout_kills_the_process(tmp_path: Path) -> None:
    result = await ShellTool(tmp_path, command_timeout_s=0.2).execute({"command": "sleep 5"}, CTX)
    assert not result.success and "did not finish within 0.2 s" in (result.error or "")


async def test_output_is_capped(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("x" * 5000, encoding="utf-8")
    result = await ShellTool(tmp_path, max_output_chars=100).execute(
        {"command": "cat big.txt"}, CTX
    )
    assert result.output.startswith("x" * 100) and "4900 more characters cut" in result.output


def test_describes_its_command_for_the_policy(tmp_path: Path) -> None:
    tool = ShellTool(tmp_path)
    assert tool.risk is RiskClass.DANGEROUS
    access = tool.describe_access({"command": "df -h"})
    assert access is not None and access.command == "df -h"


async def test_output_is_scrubbed_before_it_is_cut(tmp_path: Path) -> None:
    key = "sk-ant-api03-" + "q" * 60
    (tmp_path / "env.txt").write_text(
        "x" * 70 + f" {key}\nANTHROPIC_API_KEY={key}\nTOKEN_VALUE=conf-val-123\n"
    )
    tool = ShellTool(tmp_path, max_output_chars=100, scrub=Scrubber(["conf-val-123"]))
    result = await tool.execute({"command": "cat env.txt"}, CTX)
    # The cut at 100 characters falls inside the key: scrubbing first hides all of it.
    assert result.output.startswith("x" * 70 + " sk-a[redacted]\n")
    assert "sk-ant-api03-q" not in result.output
    full = await ShellTool(tmp_path, scrub=Scrubber(["conf-val-123"])).execute(
        {"command": "cat env.txt"}, CTX
    )
    assert key not in full.output and "conf-val-123" not in full.output
    assert "ANTHROPIC_API_KEY=sk-a[redacted]" in full.output


async def test_a_failed_command_output_is_scrubbed_too(tmp_path: Path) -> None:
    tool = ShellTool(tmp_path, scrub=Scrubber(["conf-val-123"]))
    result = await tool.execute({"command": "ls conf-val-123"}, CTX)
    assert not result.success and "conf-val-123" not in result.output + (result.error or "")


async def test_a_nul_byte_is_a_clear_error(tmp_path: Path) -> None:
    result = await ShellTool(tmp_path).execute({"command": "cat a\x00b"}, CTX)
    assert not result.success and "NUL" in (result.error or "")

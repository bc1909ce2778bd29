"""The ``shell`` tool: run one allow-listed command in the workspace, without a shell.

The command line is split with :func:`shlex.split` and executed directly (no ``/bin/sh``), so
pipes, redirections, ``;``, ``&&``, globbing and ``$(...)`` have no effect: they are refused
with a clear message before anything runs. The SecurityPolicy checks the command against its
allowlist first (the tool describes the command through ``describe_access``), and resolves
every argument that names an existing file in the workspace against its forbidden paths.
The output passes ``scrub`` (the assembled agent passes its credential scrubber) before it is
cut and returned, so ``cat ../secrets`` or ``cat /proc/<pid>/environ`` cannot hand a key to
the model even where a path check misses.
"""

from __future__ import annotations

import asyncio
import os
import shlex
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from clawseed_edge.api import BaseTool, ResourceAccess, RiskClass, ToolContext, ToolResult

from .subprocesses import communicate_within

__all__ = ["ShellTool"]

_SHELL_SYNTAX = ("|", ";", "&", ">", "<", "`", "$(", "${", "\n")
# Output kept past the cap for scrubbing, so a key that straddles the cut is seen whole.
_SCRUB_MARGIN = 4096


def _unchanged(text: str) -> str:
    return text


class ShellTool(BaseTool):
    """Run a command line in the workspace; stdout and stderr come back, capped.

    Args:
        workspace_dir: The working directory of every command.
        max_output_chars: Output beyond this is cut (head kept) with a note.
        command_timeout_s: The command is killed after this many seconds (the engine's
            per-tool timeout is set a little longer, so the tool reports it first).
        scrub: Applied to the output before it is cut and returned (credential redaction).
    """

    name = "shell"
    description = (
        "Run one command (no pipes, redirections or chaining) in the workspace and return "
        "its output. Only allow-listed programs run."
    )
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {"command": {"type": "string", "description": "e.g. 'df -h'"}},
        "required": ["command"],
    }
    risk = RiskClass.DANGEROUS

    def __init__(
        self,
        workspace_dir: Path,
        *,
        max_output_chars: int = 8000,
        command_timeout_s: float = 20.0,
        scrub: Callable[[str], str] | None = None,
    ) -> None:
        self.workspace_dir = workspace_dir
        self.scrub: Callable[[str], str] = scrub if scrub is not None else _unchanged
        self.max_output_chars = max_output_chars
        self.command_timeout_s = command_timeout_s
        self.timeout_s = command_timeout_s + 5.0

    def describe_access(self, arguments: Mapping[str, Any]) -> ResourceAccess | None:
        command = arguments.get("command")
        return ResourceAccess(command=command if isinstance(command, str) else "")

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        """Run the command. Cancel-safe: a cancelled call kills the process."""
        command = arguments.get("command")
        if not isinstance(command, str) or not command.strip():
            return ToolResult.fail("'command' must be a non-empty string, e.g. 'uptime'")
        if "\x00" in command:
            return ToolResult.fail(
                "the command contains a NUL byte (\\x00), which no argument can contain; send "
                "it without that character"
            )
        if any(token in command for token in _SHELL_SYNTAX):
            return ToolResult.fail(
                f"{command!r} uses shell syntax (pipes, redirections, chaining or "
                "substitution), which this tool does not run; send one plain command"
            )
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            return ToolResult.fail(f"cannot parse {command!r}: {exc}")
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                cwd=self.workspace_dir,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"},
            )
        except FileNotFoundError:
            return ToolResult.fail(f"no program named {argv[0]!r} on this device")
        except OSError as exc:
            return ToolResult.fail(f"cannot run {argv[0]!r}: {exc.strerror}")
        out = await communicate_within(proc, self.command_timeout_s)
        if out is None:
            return ToolResult.fail(
                f"{argv[0]!r} did not finish within {self.command_timeout_s:g} s"
            )
        text = out.decode("utf-8", errors="replace")
        full_length = len(text)
        text = self.scrub(text[: self.max_output_chars + _SCRUB_MARGIN])
        if full_length > self.max_output_chars:
            cut = full_length - self.max_output_chars
            text = f"{text[: self.max_output_chars]}\n[... {cut} more characters cut ...]"
        if proc.returncode != 0:
            return ToolResult.fail(f"{argv[0]!r} exited with status {proc.returncode}", text)
        return ToolResult.ok(text)

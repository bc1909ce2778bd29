"""File tools confined to the workspace: ``file_read``, ``file_write``, ``file_list``.

Paths are taken relative to the workspace; after resolving symlinks a path must still lie
inside it, so a link that points at ``~/.ssh`` is refused by the tool itself. The
SecurityPolicy checks the same resolved paths against its forbidden list (a second layer).
File I/O is small and local; it runs on a worker thread so a slow SD card never stalls the loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from clawseed_edge.api import BaseTool, ResourceAccess, RiskClass, Tool, ToolContext, ToolResult

__all__ = ["FileListTool", "FileReadTool", "FileWriteTool", "file_tools"]

_PATH_SCHEMA = {"type": "string", "description": "path relative to the workspace"}


class _WorkspaceFileTool(BaseTool):
    def __init__(self, workspace_dir: Path, *, max_bytes: int = 256_000) -> None:
        self.workspace_dir = workspace_dir
        self.max_bytes = max_bytes

    def _resolve(self, arguments: Mapping[str, Any]) -> Path | str:
        """The resolved path inside the workspace, or an error message."""
        raw = arguments.get("path", ".")
        if not isinstance(raw, str) or not raw:
            return "'path' must be a non-empty string relative to the workspace"
        root = self.workspace_dir.resolve()
        target = (root / raw).resolve()
        if target != root and root not in target.parents:
            return (
                f"{raw!r} is outside the workspace ({root}); file tools only reach files "
                "inside it"
            )
        return target

    def describe_access(self, arguments: Mapping[str, Any]) -> ResourceAccess | None:
        raw = arguments.get("path", ".")
        path = str(self.workspace_dir / raw) if isinstance(raw, str) else str(self.workspace_dir)
        return ResourceAccess(paths=(path,), write=self.risk is not RiskClass.READ)


class FileReadTool(_WorkspaceFileTool):
    """Read a text file from the workspace (capped at ``max_bytes``)."""

    name = "file_read"
    description = "Read a text file from the workspace."
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {"path": _PATH_SCHEMA},
        "required": ["path"],
    }

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        target = self._resolve(arguments)
        if isinstance(target, str):
            return ToolResult.fail(target)
        return await asyncio.to_thread(self._read, target)

    def _read(self, target: Path) -> ToolResult:
        try:
            with target.open("rb") as fh:
                data = fh.read(self.max_bytes + 1)
        except FileNotFoundError:
            return ToolResult.fail(f"{target.name!r} does not exist; use file_list to see files")
        except IsADirectoryError:
            return ToolResult.fail(f"{target.name!r} is a directory; use file_list")
        except OSError as exc:
            return ToolResult.fail(f"cannot read {target.name!r}: {exc.strerror}")
        text = data[: self.max_bytes].decode("utf-8", errors="replace")
        if len(data) > self.max_bytes:
            text += f"\n[... cut at {self.max_bytes} bytes ...]"
        return ToolResult.ok(text)


class FileWriteTool(_WorkspaceFileTool):
    """Write (create or replace) a text file in the workspace, atomically."""

    name = "file_write"
    description = "Create or replace a text file in the workspace."
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {"path": _PATH_SCHEMA, "content": {"type": "string"}},
        "required": ["path", "content"],
    }
    risk = RiskClass.ACT

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        content = arguments.get("content")
        if not isinstance(content, str):
            return ToolResult.fail("'content' must be a string")
        if len(content.encode("utf-8")) > self.max_bytes:
            return ToolResult.fail(f"content is larger than {self.max_bytes} bytes; split it")
        target = self._resolve(arguments)
        if isinstance(target, str):
            return ToolResult.fail(target)
        return await asyncio.to_thread(self._write, target, content)

    def _write(self, target: Path, content: str) -> ToolResult:
        tmp = target.with_name(f".{target.name}.tmp")
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(content, encoding="utf-8")
            tmp.replace(target)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            return ToolResult.fail(f"cannot write {target.name!r}: {exc.strerror}")
        return ToolResult.ok(f"wrote {len(content)} characters to {target.name}")


class FileListTool(_WorkspaceFileTool):
    """List a directory of the workspace."""

    name = "file_list"
    description = "List files in a workspace directory."
    parameters: Mapping[str, Any] = {"type": "object", "properties": {"path": _PATH_SCHEMA}}

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        target = self._resolve(arguments)
        if isinstance(target, str):
            return ToolResult.fail(target)
        return await asyncio.to_thread(self._list, target)

    def _list(self, target: Path) -> ToolResult:
        try:
            entries = sorted(target.iterdir(), key=lambda p: p.name)
        except FileNotFoundError:
            return ToolResult.fail(f"{target.name!r} does not exist")
        except NotADirectoryError:
            return ToolResult.fail(f"{target.name!r} is a file; use file_read")
        except OSError as exc:
            return ToolResult.fail(f"cannot list {target.name!r}: {exc.strerror}")
        lines = [f"{p.name}/" if p.is_dir() else p.name for p in entries[:500]]
        return ToolResult.ok("\n".join(lines) if lines else "(empty)")


def file_tools(workspace_dir: Path) -> list[Tool]:
    """The three file tools for ``workspace_dir``."""
    return [FileReadTool(workspace_dir), FileWriteTool(workspace_dir), FileListTool(workspace_dir)]

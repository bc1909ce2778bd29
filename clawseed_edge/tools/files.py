"""File tools confined to the workspace: ``file_read``, ``file_write``, ``file_list``.

Paths are taken relative to the workspace and opened one component at a time, each relative to
the descriptor of the directory before it, with ``O_NOFOLLOW``: no symbolic link is followed at
any component and ``..`` is refused. Checking a resolved path and then opening it by name
leaves a gap in which a directory can be swapped for a link to ``$CLAWSEED_HOME`` (a reader
got the secrets file, a writer landed outside); walking descriptors leaves none.
The SecurityPolicy checks the same paths against its forbidden list first (a second layer),
and what a read or a listing returns passes ``scrub`` (the assembled agent passes its
credential scrubber, :class:`clawseed_edge.agent.redact.Scrubber`; tools depend on ``api``
only, so it is handed in).
File I/O is small and local; it runs on a worker thread so a slow SD card never stalls the loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import stat
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from clawseed_edge.api import BaseTool, ResourceAccess, RiskClass, Tool, ToolContext, ToolResult

__all__ = [
    "FileListTool",
    "FileReadTool",
    "FileWriteTool",
    "WorkspaceFileRefused",
    "file_tools",
    "read_workspace_file",
    "write_workspace_file",
]

_PATH_SCHEMA = {"type": "string", "description": "path relative to the workspace"}
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# Room past the cap so a secret that straddles the cut is still seen whole by the scrubber.
_SCRUB_MARGIN = 4096


def _unchanged(text: str) -> str:
    return text


class _Refused(Exception):
    """A path the tool will not open; the message is the tool's error."""


class WorkspaceFileRefused(ValueError):
    """A workspace file that is not read: a link, not a regular file, hard-linked, outside."""


class _WorkspaceFileTool(BaseTool):
    def __init__(
        self,
        workspace_dir: Path,
        *,
        max_bytes: int = 256_000,
        scrub: Callable[[str], str] | None = None,
    ) -> None:
        self.workspace_dir = workspace_dir
        self.max_bytes = max_bytes
        self.scrub: Callable[[str], str] = scrub if scrub is not None else _unchanged

    def describe_access(self, arguments: Mapping[str, Any]) -> ResourceAccess | None:
        raw = arguments.get("path", ".")
        path = str(self.workspace_dir / raw) if isinstance(raw, str) else str(self.workspace_dir)
        return ResourceAccess(paths=(path,), write=self.risk is not RiskClass.READ)

    def _parts(self, arguments: Mapping[str, Any]) -> list[str]:
        """The path's components below the workspace (``[]`` is the workspace itself).

        Raises:
            _Refused: not a string, a NUL byte, ``..``, or an absolute path outside it.
        """
        raw = arguments.get("path", ".")
        if not isinstance(raw, str) or not raw:
            raise _Refused("'path' must be a non-empty string relative to the workspace")
        if "\x00" in raw:
            raise _Refused(
                f"path {raw[:200]!r} contains a NUL byte (\\x00), which no file name can "
                "contain; send the path without it"
            )
        if os.path.isabs(raw):
            # An absolute path is accepted only when it names something inside the workspace.
            for root in (self.workspace_dir, self.workspace_dir.resolve()):
                rel = os.path.relpath(raw, root)
                if rel != ".." and not rel.startswith("../") and raw.startswith(str(root)):
                    raw = rel
                    break
            else:
                raise _Refused(self._outside(raw))
        parts = [p for p in raw.split("/") if p not in ("", ".")]
        if ".." in parts:
            raise _Refused(self._outside(raw) + " ('..' is not followed)")
        return parts

    def _outside(self, raw: str) -> str:
        return (
            f"{raw[:200]!r} is outside the workspace ({self.workspace_dir}); file tools only "
            "reach files inside it"
        )

    def _open_dir(self, parts: list[str], *, create: bool = False) -> int:
        """A descriptor of the directory ``parts`` (created if ``create``), never via a link.

        Raises:
            _Refused: a component is a link, a file, or missing (and not ``create``).
        """
        fd = os.open(self.workspace_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            for index, name in enumerate(parts):
                try:
                    nxt = os.open(name, _DIR_FLAGS, dir_fd=fd)
                except FileNotFoundError:
                    if not create:
                        raise _Refused(
                            f"{'/'.join(parts[: index + 1])!r} does not exist; use file_list"
                        ) from None
                    with contextlib.suppress(FileExistsError):  # made meanwhile: open checks it
                        os.mkdir(name, 0o777, dir_fd=fd)
                    nxt = self._open_checked(name, fd, _DIR_FLAGS)
                except OSError as exc:
                    raise _Refused(self._explain(name, fd, exc)) from exc
                os.close(fd)
                fd = nxt
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _open_checked(self, name: str, dir_fd: int, flags: int, mode: int = 0o666) -> int:
        try:
            return os.open(name, flags, mode, dir_fd=dir_fd)
        except FileNotFoundError:
            raise
        except OSError as exc:
            raise _Refused(self._explain(name, dir_fd, exc)) from exc

    @staticmethod
    def _explain(name: str, dir_fd: int, exc: OSError) -> str:
        """The tool's error for a failed open of ``name`` inside ``dir_fd``."""
        try:
            is_link = stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
        except OSError:
            is_link = False
        if is_link or exc.errno == errno.ELOOP:
            return (
                f"{name!r} is a symbolic link, which file tools do not follow (it could lead "
                "outside the workspace); use the real path inside the workspace"
            )
        if exc.errno == errno.ENOTDIR:
            return f"{name!r} is a file, not a directory"
        if exc.errno == errno.EISDIR:
            return f"{name!r} is a directory; use file_list"
        return f"cannot open {name!r}: {exc.strerror}"


class FileReadTool(_WorkspaceFileTool):
    """Read a text file from the workspace (capped at ``max_bytes``), passed through ``scrub``."""

    name = "file_read"
    description = "Read a text file from the workspace."
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {"path": _PATH_SCHEMA},
        "required": ["path"],
    }

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        try:
            parts = self._parts(arguments)
        except _Refused as exc:
            return ToolResult.fail(str(exc))
        if not parts:
            return ToolResult.fail("the workspace itself is a directory; use file_list")
        return await asyncio.to_thread(self._read, parts)

    def _read_bytes(self, parts: list[str]) -> bytes:
        """The file's first bytes (up to the cap and the scrub margin), opened link-free.

        Raises:
            _Refused: a link on the way, not a regular file, or a file with other hard links
                (a second name for a file elsewhere, such as the secrets file).
            OSError: FileNotFoundError and the other open and read errors.
        """
        name = parts[-1]
        dir_fd = self._open_dir(parts[:-1])
        try:
            # O_NONBLOCK: opening a FIFO for reading would wait for a writer for ever.
            flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
            fd = self._open_checked(name, dir_fd, flags)
        finally:
            os.close(dir_fd)
        with os.fdopen(fd, "rb") as fh:
            info = os.fstat(fh.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise _Refused(f"{name!r} is not a regular file; file_read reads files")
            if info.st_nlink > 1:
                raise _Refused(
                    f"{name!r} has {info.st_nlink} names (a hard link): it may be a file from "
                    "outside the workspace, so it is not read; copy the file instead"
                )
            return fh.read(self.max_bytes + _SCRUB_MARGIN)

    def _read(self, parts: list[str]) -> ToolResult:
        name = parts[-1]
        try:
            data = self._read_bytes(parts)
        except _Refused as exc:
            return ToolResult.fail(str(exc))
        except FileNotFoundError:
            return ToolResult.fail(f"{name!r} does not exist; use file_list to see files")
        except IsADirectoryError:
            return ToolResult.fail(f"{name!r} is a directory; use file_list")
        except OSError as exc:
            return ToolResult.fail(f"cannot read {name!r}: {exc.strerror}")
        # Scrub before cutting, so a key that straddles the cut is not half shown.
        text = self.scrub(data.decode("utf-8", errors="replace"))
        if len(data) > self.max_bytes:
            cut = text.encode("utf-8")[: self.max_bytes].decode("utf-8", errors="ignore")
            text = cut + f"\n[... cut at {self.max_bytes} bytes ...]"
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
        try:
            parts = self._parts(arguments)
        except _Refused as exc:
            return ToolResult.fail(str(exc))
        if not parts:
            return ToolResult.fail("the workspace itself is a directory; name a file in it")
        return await asyncio.to_thread(self._write, parts, content)

    def _write(self, parts: list[str], content: str) -> ToolResult:
        name = parts[-1]
        tmp = f".{name}.{uuid.uuid4().hex[:8]}.tmp"
        try:
            dir_fd = self._open_dir(parts[:-1], create=True)
        except _Refused as exc:
            return ToolResult.fail(str(exc))
        except OSError as exc:
            return ToolResult.fail(f"cannot write {name!r}: {exc.strerror}")
        try:
            # O_EXCL|O_NOFOLLOW: the temporary file is new, never a planted link; the rename
            # below replaces the name itself (a link named like the target is replaced, not
            # followed).
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            fd = self._open_checked(tmp, dir_fd, flags)
            with os.fdopen(fd, "wb") as fh:
                fh.write(content.encode("utf-8"))
            os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except (_Refused, OSError) as exc:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dir_fd)
            if isinstance(exc, _Refused):
                return ToolResult.fail(str(exc))
            if isinstance(exc, IsADirectoryError):
                return ToolResult.fail(f"{name!r} is a directory; choose a file name")
            return ToolResult.fail(f"cannot write {name!r}: {exc.strerror}")
        finally:
            os.close(dir_fd)
        return ToolResult.ok(f"wrote {len(content)} characters to {name}")


class FileListTool(_WorkspaceFileTool):
    """List a directory of the workspace (``name/`` a directory, ``name@`` a link)."""

    name = "file_list"
    description = "List files in a workspace directory."
    parameters: Mapping[str, Any] = {"type": "object", "properties": {"path": _PATH_SCHEMA}}

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        try:
            parts = self._parts(arguments)
        except _Refused as exc:
            return ToolResult.fail(str(exc))
        return await asyncio.to_thread(self._list, parts)

    def _list(self, parts: list[str]) -> ToolResult:
        shown = "/".join(parts) or "."
        try:
            fd = self._open_dir(parts)
        except _Refused as exc:
            return ToolResult.fail(
                str(exc).replace("is a file, not a directory", "is a file; use file_read")
            )
        except OSError as exc:
            return ToolResult.fail(f"cannot list {shown!r}: {exc.strerror}")
        try:
            with os.scandir(fd) as it:
                entries = sorted(it, key=lambda e: e.name)
            lines = [
                f"{e.name}@" if e.is_symlink() else f"{e.name}/" if e.is_dir() else e.name
                for e in entries[:500]
            ]
        except OSError as exc:
            return ToolResult.fail(f"cannot list {shown!r}: {exc.strerror}")
        finally:
            os.close(fd)
        return ToolResult.ok(self.scrub("\n".join(lines)) if lines else "(empty)")


def file_tools(workspace_dir: Path, *, scrub: Callable[[str], str] | None = None) -> list[Tool]:
    """The three file tools for ``workspace_dir``; what they return passes ``scrub``."""
    return [
        FileReadTool(workspace_dir, scrub=scrub),
        FileWriteTool(workspace_dir, scrub=scrub),
        FileListTool(workspace_dir, scrub=scrub),
    ]


def read_workspace_file(
    workspace_dir: Path,
    name: str,
    *,
    max_bytes: int,
    scrub: Callable[[str], str] | None = None,
) -> str | None:
    """A text file of the workspace read the way ``file_read`` reads it, or None if absent.

    No symbolic link is followed at any component, ``..`` is refused, and the file must be a
    regular file with one name; the text passes ``scrub`` and is cut at ``max_bytes``.
    For what is read without a tool call: the identity files of the system prompt, the
    personality files a phone edits.

    Raises:
        WorkspaceFileRefused: The name or the file is refused (the message says why).
        OSError: The file exists but cannot be read.
    """
    tool = FileReadTool(workspace_dir, max_bytes=max_bytes, scrub=scrub)
    try:
        parts = tool._parts({"path": name})
        if not parts:
            raise _Refused("name a file, not the workspace itself")
        data = tool._read_bytes(parts)
    except _Refused as exc:
        raise WorkspaceFileRefused(str(exc)) from None
    except FileNotFoundError:
        return None
    text = tool.scrub(data.decode("utf-8", errors="replace"))
    if len(data) > max_bytes:
        text = text.encode("utf-8")[:max_bytes].decode("utf-8", errors="ignore")
    return text


def write_workspace_file(workspace_dir: Path, name: str, content: str) -> None:
    """Replace a text file of the workspace atomically, the way ``file_write`` writes it.

    No symbolic link is followed (a link named like the file is replaced, not written
    through), ``..`` is refused, missing directories are created.

    Raises:
        WorkspaceFileRefused: The name is refused or the file cannot be written (the message
            says why).
    """
    tool = FileWriteTool(workspace_dir, max_bytes=max(1, len(content.encode("utf-8"))))
    try:
        parts = tool._parts({"path": name})
    except _Refused as exc:
        raise WorkspaceFileRefused(str(exc)) from None
    if not parts:
        raise WorkspaceFileRefused("name a file, not the workspace itself")
    result = tool._write(parts, content)
    if not result.success:
        raise WorkspaceFileRefused(result.error or f"cannot write {name!r}")

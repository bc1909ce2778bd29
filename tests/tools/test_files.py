"""File tools stay inside the workspace, symlinks included."""

from __future__ import annotations

import os
from pathlib import Path

from clawseed_edge.api import RiskClass, ToolContext
from clawseed_edge.tools.files import FileListTool, FileReadTool, FileWriteTool, file_tools

CTX = ToolContext()


async def test_write_read_list_round_trip(tmp_path: Path) -> None:
    write = await FileWriteTool(tmp_path).execute(
        {"path": "notes/a.txt", "content": "relay on"}, CTX
    )
    assert write.success, write.error
    read = await FileReadTool(tmp_path).execute({"path": "notes/a.txt"}, CTX)
    assert read.output == "relay on"
    listing = await FileListTool(tmp_path).execute({"path": "."}, CTX)
    assert listing.output == "notes/"
    assert not list((tmp_path / "notes").glob(".*.tmp")), "no temp file left behind"


async def test_escape_by_dotdot_and_absolute_path_is_refused(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    for path in ("../secret", "/etc/passwd"):
        result = await FileReadTool(ws).execute({"path": path}, CTX)
        assert not result.success and "outside the workspace" in (result.error or "")


async def test_symlink_escape_is_refused(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    outside = tmp_path / "ssh"
    outside.mkdir()
    (outside / "id_ed25519").write_text("KEY", encoding="utf-8")
    os.symlink(outside, ws / "link")
    result = await FileReadTool(ws).execute({"path": "link/id_ed25519"}, CTX)
    assert not result.success and "outside the workspace" in (result.error or "")
    write = await FileWriteTool(ws).execute({"path": "link/new", "content": "x"}, CTX)
    assert not write.success and not (outside / "new").exists()


async def test_missing_file_says_what_to_do(tmp_path: Path) -> None:
    result = await FileReadTool(tmp_path).execute({"path": "nope.txt"}, CTX)
    assert result.error == "'nope.txt' does not exist; use file_list to see files"


async def test_read_is_capped(tmp_path: Path) -> None:
    (tmp_path / "big").write_text("y" * 100, encoding="utf-8")
    result = await FileReadTool(tmp_path, max_bytes=10).execute({"path": "big"}, CTX)
    assert result.output == "y" * 10 + "\n[... cut at 10 bytes ...]"


def test_risk_and_access_description(tmp_path: Path) -> None:
    read, write, listing = file_tools(tmp_path)
    assert (read.risk, write.risk, listing.risk) == (RiskClass.READ, RiskClass.ACT, RiskClass.READ)
    access = write.describe_access({"path": "a.txt", "content": ""})
    assert access is not None and access.write and access.paths == (str(tmp_path / "a.txt"),)

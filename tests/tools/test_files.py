"""File tools stay inside the workspace, symlinks included."""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path

from clawseed_edge.agent.redact import Scrubber
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


async def test_symlink_flip_race_reads_and_writes_nothing_outside(tmp_path: Path) -> None:
    """Issue 16.13: a thread flips ``workspace/real`` between a directory and a symlink to
    the home; 1,000 reads, writes and listings through it must never reach the home."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "outside.txt").write_text("OUTSIDE-MARKER", encoding="utf-8")
    ws = home / "workspace"
    ws.mkdir()
    real = ws / "real"
    real.mkdir()
    stop = threading.Event()

    def flip() -> None:
        while not stop.is_set():
            try:
                if os.path.islink(real):
                    os.unlink(real)
                    os.mkdir(real)
                else:
                    for name in os.listdir(real):
                        os.unlink(real / name)
                    os.rmdir(real)
                    os.symlink(home, real)
            except OSError:
                pass  # the tool raced us (created a file or the directory): flip again

    read, write, listing = file_tools(ws)
    flipper = threading.Thread(target=flip, daemon=True)
    flipper.start()
    leaks: list[str] = []
    try:
        # Batches of concurrent calls: many worker threads race the flipper at once, and the
        # 3,000 calls take a second or two instead of one event-loop round trip each.
        for _ in range(10):
            reads = [read.execute({"path": "real/outside.txt"}, CTX) for _ in range(100)]
            writes = [
                write.execute({"path": "real/planted.txt", "content": "x"}, CTX) for _ in range(100)
            ]
            lists = [listing.execute({"path": "real"}, CTX) for _ in range(100)]
            results = await asyncio.gather(*reads, *writes, *lists)
            leaks += [r.output for r in results[:100] if "OUTSIDE-MARKER" in r.output]
            leaks += [r.output for r in results[200:] if "outside.txt" in r.output]
    finally:
        stop.set()
        flipper.join()
    planted = [p.name for p in home.iterdir() if "planted" in p.name]
    assert leaks == [] and planted == []


async def test_a_symlink_inside_the_workspace_is_not_followed(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.txt").write_text("hi", encoding="utf-8")
    os.symlink(tmp_path / "notes", tmp_path / "alias")
    result = await FileReadTool(tmp_path).execute({"path": "alias/a.txt"}, CTX)
    assert not result.success and "'alias' is a symbolic link" in (result.error or "")
    listing = await FileListTool(tmp_path).execute({"path": "."}, CTX)
    assert listing.output == "alias@\nnotes/"


async def test_a_nul_byte_in_a_path_is_a_clear_error(tmp_path: Path) -> None:
    for tool in file_tools(tmp_path):
        result = await tool.execute({"path": "a\x00b", "content": ""}, CTX)
        assert not result.success and "NUL" in (result.error or ""), tool.name


async def test_a_fifo_is_not_opened_for_reading(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    result = await FileReadTool(tmp_path).execute({"path": "pipe"}, CTX)
    assert not result.success and "not a regular file" in (result.error or "")


async def test_read_output_is_scrubbed_of_credentials(tmp_path: Path) -> None:
    key = "sk-ant-api03-" + "k" * 40
    (tmp_path / ".env").write_text(f"ANTHROPIC_API_KEY={key}\nMY_VALUE=configured-value-1\n")
    read = FileReadTool(tmp_path, scrub=Scrubber(["configured-value-1"]))
    result = await read.execute({"path": ".env"}, CTX)
    assert key not in result.output and "configured-value-1" not in result.output
    assert "ANTHROPIC_API_KEY=sk-a[redacted]" in result.output

"""`/reset` forgets the stored conversation; a one-shot `agent -m` has a session of its own."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pytest

from clawseed_edge.cli.main import main
from clawseed_edge.memory.sqlite import SqliteMemory


def history(home: Path, session: str, role: str | None = None) -> list[str]:
    async def load() -> list[str]:
        async with SqliteMemory.open(home / "memory.db") as memory:
            messages = await memory.load_history(session)
        return [m.content for m in messages if role is None or m.role == role]

    return asyncio.run(load())


def chat(monkeypatch: pytest.MonkeyPatch, lines: str, *argv: str) -> int:
    monkeypatch.setattr("sys.stdin", io.StringIO(lines))
    return main(["chat", "--sim", *argv])


def test_reset_clears_the_stored_history(
    clawseed_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert chat(monkeypatch, "hello\n/exit\n") == 0
    assert history(clawseed_home, "cli"), "the turn is stored"
    assert chat(monkeypatch, "/reset\n/exit\n") == 0
    assert "conversation forgotten" in capsys.readouterr().err
    assert history(clawseed_home, "cli") == []


def test_reset_then_talk_starts_from_nothing(
    clawseed_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert chat(monkeypatch, "hello\n/reset\nstatus\n/exit\n") == 0
    asked = history(clawseed_home, "cli", role="user")
    assert len(asked) == 1 and "status" in asked[0]


def test_a_one_shot_does_not_join_the_chat_session(
    clawseed_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert chat(monkeypatch, "hello\n/exit\n") == 0
    before = history(clawseed_home, "cli")
    assert main(["agent", "--sim", "-m", "status"]) == 0
    assert history(clawseed_home, "cli") == before


def test_one_shots_with_a_session_share_it(clawseed_home: Path) -> None:
    assert main(["agent", "--sim", "--session", "s1", "-m", "hello"]) == 0
    assert main(["agent", "--sim", "--session", "s1", "-m", "status"]) == 0
    stored = history(clawseed_home, "s1")
    assert any("hello" in t for t in stored) and any("status" in t for t in stored)


def test_without_memory_one_shots_and_reset_still_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text('[provider]\nname = "demo"\n[memory]\nbackend = "none"\n', encoding="utf-8")
    assert main(["agent", "--config", str(cfg), "-m", "hello"]) == 0, capsys.readouterr().err
    assert chat(monkeypatch, "hello\n/reset\n/exit\n", "--config", str(cfg)) == 0
    assert "conversation forgotten" in capsys.readouterr().err

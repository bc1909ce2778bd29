"""``clawseed-edge memory ...`` through the real entry point, on a temporary database."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from clawseed_edge.api import MemoryEntry
from clawseed_edge.cli.main import main
from clawseed_edge.memory.snapshot import parse_snapshot
from clawseed_edge.memory.sqlite import SqliteMemory


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "memory.db"

    async def fill() -> None:
        async with SqliteMemory.open(path) as mem:
            await mem.store(MemoryEntry("fan_pin", "the fan relay is on GPIO23", updated_at=1e9))
            await mem.store(MemoryEntry("note", "water the tomatoes", category="daily"))
            await mem.store(MemoryEntry("secret", "bob's fan is blue", namespace="bob"))

    asyncio.run(fill())
    return path


def test_list(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["memory", "list", "--db", str(db)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split("\t")[0] for line in lines] == ["note", "fan_pin"]
    assert main(["memory", "list", "--db", str(db), "--all-namespaces", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {r["key"] for r in rows} == {"note", "fan_pin", "secret"}


def test_search_uses_home_when_no_db_option(
    db: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAWSEED_HOME", str(db.parent))
    assert main(["memory", "search", 'fan "relay" AND -x:']) == 0
    out = capsys.readouterr().out
    assert out.startswith("fan_pin\t") and "bob" not in out


def test_forget(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["memory", "forget", "--db", str(db), "fan_pin"]) == 0
    assert main(["memory", "forget", "--db", str(db), "fan_pin"]) == 1
    assert "nothing stored under 'fan_pin'" in capsys.readouterr().err
    assert main(["memory", "list", "--db", str(db), "--json"]) == 0
    assert "fan_pin" not in capsys.readouterr().out


def test_export_filters_and_formats(
    db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["memory", "export", "--db", str(db), "--until", "2010-01-01"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["key"] for r in rows] == ["fan_pin"]
    out = tmp_path / "snap.md"
    argv = ["memory", "export", "--db", str(db), "-c", "core", "--format", "snapshot", "-o"]
    assert main([*argv, str(out)]) == 0
    assert [e.key for e in parse_snapshot(out.read_text())] == ["fan_pin"]


def test_missing_database_is_an_error_and_not_created(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nope.db"
    assert main(["memory", "list", "--db", str(missing)]) == 1
    assert "no memory database" in capsys.readouterr().err
    assert not missing.exists()


def test_bad_date_names_the_option(db: Path) -> None:
    with pytest.raises(SystemExit, match="--since 'yesterday'"):
        main(["memory", "export", "--db", str(db), "--since", "yesterday"])


@pytest.mark.parametrize("action", ["list", "search", "forget", "export"])
@pytest.mark.parametrize("position", ["before", "after"])
def test_every_action_uses_the_configured_memory_path(
    db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], action: str, position: str
) -> None:
    custom = tmp_path / "elsewhere" / "mem.db"
    custom.parent.mkdir()
    db.rename(custom)
    cfg = tmp_path / "c.toml"
    cfg.write_text(f'[memory]\npath = "{custom}"\n', encoding="utf-8")
    extra = {"list": [], "search": ["tomatoes"], "forget": ["note"], "export": []}[action]
    config = ["--config", str(cfg)]
    argv = (
        [*config, "memory", action, *extra]
        if position == "before"
        else ["memory", action, *config, *extra]
    )
    assert main(argv) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert ("note" in out) if action != "forget" else ("forgot 'note'" in out)


def test_a_relative_memory_path_is_under_home(
    db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAWSEED_HOME", str(db.parent))
    db.rename(db.parent / "other.db")
    cfg = tmp_path / "c.toml"
    cfg.write_text('[memory]\npath = "other.db"\n', encoding="utf-8")
    assert main(["memory", "list", "--config", str(cfg)]) == 0
    assert "note" in capsys.readouterr().out


def test_a_bad_config_is_an_error_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text("[memory]\npth = 1\n", encoding="utf-8")
    assert main(["memory", "list", "--config", str(cfg)]) == 1
    assert f"{cfg}: memory.pth: unknown key" in capsys.readouterr().err

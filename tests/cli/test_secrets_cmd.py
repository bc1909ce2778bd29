from __future__ import annotations

import io
import stat
from pathlib import Path

import pytest

from clawseed_edge.cli.main import main
from clawseed_edge.config.secrets import read_secrets


def test_set_list_remove(clawseed_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["secrets", "set", "ANTHROPIC_API_KEY", "--value", "sk-ant-abcdefgh1234"]) == 0
    assert main(["secrets", "set", "OTHER", "--value", "  spaced 'x' "]) == 0
    path = clawseed_home / "secrets"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert read_secrets(path) == {
        "ANTHROPIC_API_KEY": "sk-ant-abcdefgh1234",
        "OTHER": "  spaced 'x' ",
    }
    capsys.readouterr()
    assert main(["secrets", "list"]) == 0
    out = capsys.readouterr().out
    assert out.split() == ["ANTHROPIC_API_KEY", "OTHER"]
    assert "sk-ant" not in out
    assert main(["secrets", "remove", "OTHER"]) == 0
    assert read_secrets(path) == {"ANTHROPIC_API_KEY": "sk-ant-abcdefgh1234"}


def test_set_replaces_in_place_and_keeps_comments(clawseed_home: Path) -> None:
    path = clawseed_home / "secrets"
    path.write_text("# mine\nA=1\nB=2\n")
    path.chmod(0o600)
    assert main(["secrets", "set", "A", "--value", "new"]) == 0
    assert path.read_text() == "# mine\nA=new\nB=2\n"


def test_set_reads_stdin(
    clawseed_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("from-stdin-value\n"))
    assert main(["secrets", "set", "TOKEN_X"]) == 0
    assert read_secrets(clawseed_home / "secrets") == {"TOKEN_X": "from-stdin-value"}
    assert "from-stdin-value" not in capsys.readouterr().out


@pytest.mark.parametrize("name", ["1ABC", "A-B", "A B", "", "X" * 200])
def test_bad_name(name: str, clawseed_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["secrets", "set", name, "--value", "v"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "not a valid secret name" in err
    assert len(err.strip().splitlines()) == 1
    assert not (clawseed_home / "secrets").exists()


def test_empty_or_multiline_value(clawseed_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["secrets", "set", "A", "--value", ""]) == 1
    assert main(["secrets", "set", "A", "--value", "a\nb"]) == 1
    err = capsys.readouterr().err
    assert "empty" in err and "spans lines" in err


def test_remove_missing(clawseed_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["secrets", "remove", "NOPE"]) == 1
    assert "no secret named NOPE" in capsys.readouterr().err


def test_wide_mode_refused_and_not_rewritten(
    clawseed_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = clawseed_home / "secrets"
    path.write_text("A=1\n")
    path.chmod(0o644)
    assert main(["secrets", "set", "B", "--value", "2"]) == 1
    assert "chmod 600" in capsys.readouterr().err
    assert path.read_text() == "A=1\n"
    assert main(["secrets", "list"]) == 1


def test_list_empty(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["secrets", "list"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "" and "no secrets" in captured.err

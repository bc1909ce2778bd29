"""Global options (``--config``) work before and after the command name, for every command."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from clawseed_edge.cli.main import build_parser, main


def _leaf_parsers(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> list[tuple[str, ...]]:
    """The command paths of every runnable (sub)command, e.g. ``("memory", "list")``."""
    found: list[tuple[str, ...]] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.extend(_leaf_parsers(sub, (*path, name)))
    return found or [path]


def test_config_after_the_command_name_runs_the_agent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text('[provider]\nname = "demo"\n', encoding="utf-8")
    code = main(["agent", "--config", str(cfg), "-m", "hello"])
    _, err = capsys.readouterr()
    assert code == 0, err
    assert "embedded default" not in err  # the file was used, not the default


def test_config_after_the_command_name_is_used(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = tmp_path / "bad.toml"
    cfg.write_text('[agent]\nmax_history = "lots"\n', encoding="utf-8")
    code = main(["agent", "--config", str(cfg), "-m", "hi"])
    assert code == 1
    assert str(cfg) in capsys.readouterr().err


@pytest.mark.parametrize("position", ["before", "after"])
def test_every_command_takes_config_on_either_side(position: str) -> None:
    parser = build_parser()
    leaves = _leaf_parsers(parser)
    assert ("memory", "list") in leaves and ("agent",) in leaves
    for path in leaves:
        extra = ["-m", "x"] if path == ("agent",) else []
        extra += ["q"] if path == ("memory", "search") else []
        takes_name = {
            ("memory", "forget"),
            ("boards", "show"),
            ("secrets", "set"),
            ("secrets", "remove"),
            ("cron", "remove"),
            ("cron", "run-now"),
            ("sensors", "history"),
            ("automations", "remove"),
        }
        extra += ["k"] if path in takes_name else []
        extra += ["nucleo-f401re", "--firmware", "f.hex"] if path == ("flash",) else []
        extra += ["g.temperature", "1"] if path == ("sim", "set") else []
        extra += ["doorbell"] if path == ("sim", "press") else []
        extra += ["door", "1"] if path == ("sim", "set-input") else []
        extra += ["n", "--every", "1m", "--prompt", "x"] if path == ("cron", "add") else []
        extra += ["n", "--when", "g.t > 1"] if path == ("automations", "add") else []
        argv = (
            ["--config", "c.toml", *path, *extra]
            if position == "before"
            else [*path, "--config", "c.toml", *extra]
        )
        args = parser.parse_args(argv)
        assert args.config == "c.toml", path


def test_config_defaults_to_none_everywhere() -> None:
    args = build_parser().parse_args(["agent", "-m", "x"])
    assert args.config is None

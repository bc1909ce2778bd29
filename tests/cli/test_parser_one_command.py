"""A command line that names its command builds only that command's parser, and parses alike."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from clawseed_edge.cli.main import _command_named, build_parser


def _choices(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _helps(parser: argparse.ArgumentParser) -> list[str]:
    """The help of the parser and of every parser below it."""
    found = [parser.format_help()]
    for child in dict.fromkeys(_choices(parser).values()):
        found.extend(_helps(child))
    return found


def test_every_command_gets_the_parser_the_full_build_gives_it() -> None:
    full = _choices(build_parser())
    assert {"gateway", "run", "agent", "chat", "estop", "cron"} <= set(full)
    for name, parser in full.items():
        alone = _choices(build_parser([name]))
        assert name in alone
        assert _helps(alone[name]) == _helps(parser), name


def test_only_the_named_command_module_is_registered() -> None:
    assert set(_choices(build_parser(["gateway", "--sim"]))) == {"gateway"}
    assert set(_choices(build_parser(["--config", "run", "gateway"]))) == {"gateway"}
    assert set(_choices(build_parser(["--conf", "run", "gateway"]))) == {"gateway"}
    # No command, --help, a command named by another module, or an unknown one: everything.
    for argv in ([], ["--help"], ["chat"], ["nosuch"], ["--config=c.toml"]):
        assert "cron" in _choices(build_parser(argv)), argv


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (["gateway", "--sim"], "gateway"),
        (["--config", "c.toml", "run"], "run"),
        (["--config=c.toml", "run"], "run"),
        (["--conf", "c.toml", "run"], "run"),
        (["-v", "run"], "run"),
        (["--", "run"], "run"),
        (["--config"], None),
        (["--version"], None),
    ],
)
def test_the_command_word_is_found_past_top_level_options(
    argv: list[str], command: str | None
) -> None:
    assert _command_named(argv) == command


def test_a_named_command_imports_no_other_command_module() -> None:
    script = (
        "import sys; from clawseed_edge.cli.main import build_parser; "
        "build_parser(['gateway', '--sim']); "
        "print(sorted(m for m in sys.modules if m.endswith('_cmd')))"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "['clawseed_edge.cli.gateway_cmd']"

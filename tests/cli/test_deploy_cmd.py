"""``clawseed-edge deploy`` against the virtual board, and its board/port defaults."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from clawseed_edge.cli.main import main
from clawseed_edge.peripherals.serial.virtual import VirtualBoard

pytest.importorskip("mpremote")


@pytest.fixture
def virtual() -> Iterator[VirtualBoard]:
    with VirtualBoard("nucleo-g0b1re") as board:
        yield board


def test_deploy_to_the_port_of_the_only_nucleo_in_the_config(
    virtual: VirtualBoard, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        f'[[peripherals]]\nname = "bench"\ntype = "nucleo"\nboard = "nucleo-g0b1re"\n'
        f'port = "{virtual.path}"\n'
    )
    assert main(["--config", str(config), "deploy", "--source"]) == 0
    out = capsys.readouterr()
    assert "deploying firmware" in out.out and "verified by SHA-256" in out.out
    assert "clawseed_core.py" in out.err  # per-file progress
    assert (virtual.fs_dir / "clawseed_pins.py").read_text().count('BOARD = "nucleo-g0b1re"') == 1
    assert virtual.resets == 1


def test_deploy_without_board_or_nucleo_in_the_config_says_pass_board(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[[peripherals]]\nname = "pi"\ntype = "pi_gpio"\nboard = "sim"\n')
    assert main(["--config", str(config), "deploy"]) == 1
    assert "pass --board ID" in capsys.readouterr().err


def test_deploy_refuses_a_pi(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["deploy", "--board", "rpi4b", "--port", "/dev/null"]) == 2
    assert "not a Nucleo" in capsys.readouterr().err


def test_deploy_names_a_missing_firmware_dir(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "deploy",
            "--board",
            "nucleo-f401re",
            "--port",
            "/dev/null",
            "--firmware-dir",
            str(tmp_path),
        ]
    )
    assert code == 1
    assert "--firmware-dir" in capsys.readouterr().err

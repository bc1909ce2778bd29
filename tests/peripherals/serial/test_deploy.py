"""Deploy through the raw REPL to the virtual board; Ctrl-C reaching the REPL."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import serial

from clawseed_edge.api import BoardProtocolError, HardwareError
from clawseed_edge.peripherals.boards import default_registry
from clawseed_edge.peripherals.serial import deploy as deploy_module
from clawseed_edge.peripherals.serial.bundle import FirmwareBundle
from clawseed_edge.peripherals.serial.deploy import deploy_bundle
from clawseed_edge.peripherals.serial.pintable import table_hash
from clawseed_edge.peripherals.serial.virtual import VirtualBoard
from clawseed_edge.peripherals.serial.virtual_repl import VirtualRepl

pytest.importorskip("mpremote")
BOARD = default_registry().get("nucleo-f401re")


@pytest.fixture
def board() -> Iterator[VirtualBoard]:
    with VirtualBoard(BOARD.id) as vb:
        yield vb


@pytest.fixture(scope="module")
def bundle() -> FirmwareBundle:
    return FirmwareBundle.build(BOARD, compiled=False)


def test_deploy_copies_verifies_restarts_and_confirms(
    board: VirtualBoard, bundle: FirmwareBundle
) -> None:
    seen: list[tuple[str, int, int]] = []
    result = deploy_bundle(
        board.path,
        bundle,
        pins_hash=table_hash(BOARD),
        progress=lambda *p: seen.append(p),
    )
    assert result.files == list(bundle.files)
    for name, data in bundle.files.items():
        assert (board.fs_dir / name).read_bytes() == data
    assert {name for name, _, _ in seen} == set(bundle.files)
    assert all(written <= size for _, written, size in seen)
    assert result.hello is not None and result.hello["fw"] == bundle.version
    assert board.resets == 1 and board.error is None


def test_deploy_removes_copies_that_would_shadow_the_new_ones(
    board: VirtualBoard, bundle: FirmwareBundle
) -> None:
    compiled_name = board.fs_dir / "clawseed_core.mpy"
    compiled_name.write_bytes(b"old")
    deploy_bundle(board.path, bundle, restart=False)
    assert not compiled_name.exists()  # a source deploy must not leave an old .mpy behind


def test_stale_pin_table_is_reported(board: VirtualBoard, bundle: FirmwareBundle) -> None:
    with pytest.raises(BoardProtocolError, match="pin table"):
        deploy_bundle(board.path, bundle, pins_hash="0" * 16)


def test_a_damaged_copy_fails_verification_naming_the_file(
    board: VirtualBoard, bundle: FirmwareBundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Damaged:
        @staticmethod
        def sha256(data: bytes) -> object:
            return hashlib.sha256(data + b"!")

    monkeypatch.setattr(deploy_module, "hashlib", Damaged)
    with pytest.raises(HardwareError, match=r"clawseed_timers\.py on the board does not match"):
        deploy_bundle(board.path, bundle, restart=False)


def test_ctrl_c_reaches_the_repl_with_outputs_safe_and_ctrl_d_restarts(
    board: VirtualBoard,
) -> None:
    with serial.Serial(board.path, 115200, timeout=10) as link:
        link.write(b'{"id":1,"op":"pin.write","args":{"pin":"PA5","value":1}}\n')
        assert json.loads(link.readline())["ok"]
        link.write(b"\x03")
        assert link.read_until(b">>> ").endswith(b">>> ")
        assert board.state.level("PA5") == 0  # the firmware applied the safe state
        link.write(b"\x04")
        assert link.read_until(b"soft reboot\r\n").endswith(b"soft reboot\r\n")
        link.write(b'{"id":2,"op":"ping"}\n')
        assert json.loads(link.readline()) == {"id": 2, "ok": True, "result": {"pong": True}}


def test_repl_sandbox_stays_inside_the_board_directory(tmp_path: Path) -> None:
    repl = VirtualRepl(tmp_path, "test")
    repl.feed(b"\x01")
    out = repl.feed(b"f=open('../escape.txt','wb')\x04")
    assert b"EPERM" in out and not (tmp_path.parent / "escape.txt").exists()
    out = repl.feed(b"import subprocess\x04")
    assert b"ImportError" in out
    assert repl.feed(b"\x05A\x01") == b"R\x00"


def test_deploy_resets_a_board_whose_hardware_watchdog_runs(
    board: VirtualBoard, bundle: FirmwareBundle
) -> None:
    # The host started the MCU's watchdog (opt-in); at the REPL nothing feeds it, so deploy
    # must reset the board first instead of being reset in the middle of the copy.
    with serial.Serial(board.path, 115200, timeout=5) as link:
        link.write(b'{"id": 1, "op": "watchdog", "args": {"period_ms": 0, "hardware_ms": 500}}\n')
        assert json.loads(link.readline())["result"] == {"period_ms": 0, "hardware_ms": 500}
    assert board.state.wdt is not None
    result = deploy_bundle(board.path, bundle, pins_hash=table_hash(BOARD))
    assert board.hard_resets == 1 and board.error is None
    assert result.hello is not None and result.hello["hw_watchdog_ms"] == 0
    for name, data in bundle.files.items():
        assert (board.fs_dir / name).read_bytes() == data

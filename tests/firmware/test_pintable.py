"""The committed firmware pin tables match the board files they are generated from."""

from __future__ import annotations

from pathlib import Path

import pytest

from clawseed_edge.peripherals.boards import BoardRegistry, parse_board
from clawseed_edge.peripherals.serial.pintable import FIRMWARE_DIR, render, table_hash, table_path

MCUS = [b for b in BoardRegistry.load().list() if b.family == "mcu"]


@pytest.mark.parametrize("board", MCUS, ids=lambda b: b.id)
def test_committed_table_is_current(board: object) -> None:
    path = table_path(board.id)  # type: ignore[attr-defined]
    assert path.is_file(), (
        f"missing {path}: run python -m clawseed_edge.peripherals.serial.pintable"
    )
    assert path.read_text(encoding="utf-8") == render(board), (  # type: ignore[arg-type]
        f"{path} is stale: run python -m clawseed_edge.peripherals.serial.pintable"
    )


def test_no_table_without_a_board() -> None:
    tables = {p.stem for p in (FIRMWARE_DIR / "pins").glob("*.py")}
    assert tables == {b.id.replace("-", "_") for b in MCUS}


def test_hash_follows_the_content() -> None:
    board = MCUS[0]
    raw = {
        "id": board.id, "name": board.name, "family": "mcu", "flash_target": "x",
        "pins": [{"name": "PA5", "header": "D13", "caps": ["digital_out"]}],
    }  # fmt: skip
    changed = parse_board({**raw, "pins": [{**raw["pins"][0], "header": "D12"}]}, source="t")  # type: ignore[dict-item]
    assert table_hash(parse_board(raw, source="t")) != table_hash(changed)


def test_table_module_executes_and_resolves(tmp_path: Path) -> None:
    namespace: dict[str, object] = {}
    exec(render(MCUS[0]), namespace)
    assert namespace["NAMES"]["D13"] == "PA5"  # type: ignore[index]
    assert "PA13" in namespace["RESERVED"]  # type: ignore[operator]


def test_repo_firmware_dir_is_the_packaged_one() -> None:
    # One copy: the top-level firmware/ is a link to the package data that deploy ships.
    repo_firmware = Path(__file__).parents[2] / "firmware"
    assert repo_firmware.resolve() == FIRMWARE_DIR.resolve()
    assert (FIRMWARE_DIR / "clawseed_core.py").is_file()

"""Board detection against fake /proc and /sys trees."""

from __future__ import annotations

from pathlib import Path

from clawseed_edge.peripherals.boards import default_registry
from clawseed_edge.peripherals.detect import detect_boards, match_pi, memory_total_mb
from tests.fake_root import laptop_tree, nucleo_on_usb, pi5_tree, write


def test_a_pi_5_is_recognised_from_its_device_tree_model(tmp_path: Path) -> None:
    found = detect_boards(pi5_tree(tmp_path))
    assert found.model == "Raspberry Pi 5 Model B Rev 1.0"  # the trailing NUL is gone
    assert found.pi is not None and found.pi.id == "rpi5"
    assert found.is_pi and found.usb == ()
    assert found.memory_mb == 8_245_000 // 1024


def test_the_longest_model_prefix_wins() -> None:
    pis = [b for b in default_registry().list() if b.family == "pi"]
    plus = match_pi("Raspberry Pi 3 Model B Plus Rev 1.3", pis)
    plain = match_pi("Raspberry Pi 3 Model B Rev 1.2", pis)
    assert plus is not None and plus.id == "rpi3bplus"
    assert plain is not None and plain.id == "rpi3b"


def test_an_unknown_pi_is_still_a_pi_without_a_board_file(tmp_path: Path) -> None:
    write(tmp_path, "proc/device-tree/model", "Raspberry Pi 400 Rev 1.0")
    found = detect_boards(tmp_path)
    assert found.pi is None and found.is_pi


def test_a_nucleo_is_found_by_its_st_link_ids_and_interfaces_are_skipped(tmp_path: Path) -> None:
    found = detect_boards(nucleo_on_usb(laptop_tree(tmp_path)))
    assert not found.is_pi and found.model is None
    assert len(found.usb) == 1
    board = found.usb[0]
    assert board.usb == "0483:374B" and board.sysfs_name == "1-1.2"
    assert "nucleo-f401re" in board.candidates and "nucleo-l476rg" in board.candidates
    assert board.product == "STM32 STLink"


def test_nothing_to_read_is_no_board_not_an_error(tmp_path: Path) -> None:
    found = detect_boards(tmp_path)
    assert found.model is None and found.pi is None and found.usb == ()
    assert memory_total_mb(tmp_path) is None

"""Flashing through pyocd, at its API boundary: the paths that need no board run for real."""

from __future__ import annotations

from pathlib import Path

import pytest

from clawseed_edge.api import BoardNotFound, HardwareError
from clawseed_edge.cli.main import main
from clawseed_edge.peripherals.boards import default_registry

pytest.importorskip("pyocd", reason="pyocd is the [flash] extra")

from clawseed_edge.peripherals.serial.flash import (
    find_probe,
    flash_firmware,
    pack_for_target,
    resolve_target,
)


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    ("target", "pack"),
    [
        ("stm32f401retx", "Keil.STM32F4xx_DFP"),
        ("stm32f411retx", "Keil.STM32F4xx_DFP"),
        ("stm32l476rgtx", "Keil.STM32L4xx_DFP"),
        ("stm32g0b1retx", "Keil.STM32G0xx_DFP"),
    ],
)
def test_missing_pack_names_the_pack_and_the_command(target: str, pack: str) -> None:
    assert pack_for_target(target) == pack
    with pytest.raises(HardwareError) as info:
        resolve_target(target)
    message = str(info.value)
    assert pack in message and f"pyocd pack install {target}" in message and "--pack" in message


@pytest.mark.timeout(60)
def test_pack_file_missing_or_not_a_pack(tmp_path: Path) -> None:
    with pytest.raises(HardwareError, match="does not exist"):
        resolve_target("stm32f401retx", tmp_path / "nope.pack")
    junk = tmp_path / "junk.pack"
    junk.write_bytes(b"not a zip")
    with pytest.raises(HardwareError, match="not a readable CMSIS pack"):
        resolve_target("stm32f401retx", junk)


@pytest.mark.timeout(60)
def test_no_probe_is_an_error_not_a_wait() -> None:
    # CI machines have no ST-LINK: pyocd's real USB scan runs and finds nothing.
    with pytest.raises(BoardNotFound, match="no debug probe"):
        find_probe()
    with pytest.raises(BoardNotFound, match="no debug probe with id 0669FF"):
        find_probe("0669FF")


@pytest.mark.timeout(60)
def test_flash_with_a_builtin_target_stops_at_the_missing_probe(tmp_path: Path) -> None:
    # A board whose target pyocd has built in goes past the pack check to the probe scan.
    import msgspec

    board = msgspec.structs.replace(
        default_registry().get("nucleo-f401re"), flash_target="stm32f429xi"
    )
    image = tmp_path / "firmware.hex"
    image.write_text(":00000001FF\n")
    with pytest.raises(BoardNotFound, match="no debug probe"):
        flash_firmware(board, image)


def test_bad_images_refused_before_pyocd_runs(tmp_path: Path) -> None:
    board = default_registry().get("nucleo-f401re")
    with pytest.raises(HardwareError, match="does not exist"):
        flash_firmware(board, tmp_path / "missing.hex")
    dfu = tmp_path / "firmware.dfu"
    dfu.write_bytes(b"x")
    with pytest.raises(HardwareError, match=r"\.dfu is for USB DFU"):
        flash_firmware(board, dfu)


def test_cli_says_micropython_has_no_g071rb(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["flash", "nucleo-g071rb", "--firmware", "x.hex"]) == 2
    assert "MicroPython has no NUCLEO_G071RB board" in capsys.readouterr().err


@pytest.mark.timeout(60)
def test_cli_missing_pack_exit_code_and_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    image = tmp_path / "firmware.hex"
    image.write_text(":00000001FF\n")
    assert main(["flash", "nucleo-g0b1re", "--firmware", str(image)]) == 1
    assert "Keil.STM32G0xx_DFP" in capsys.readouterr().err


class FakeTarget:
    """A target whose flash is a dict of bytes (pyocd's read_memory_block8 boundary)."""

    def __init__(self, memory: dict[int, int]) -> None:
        self.memory = memory

    def read_memory_block8(self, address: int, size: int) -> list[int]:
        return [self.memory.get(address + i, 0xFF) for i in range(size)]


def test_verify_reads_back_a_bin_image(tmp_path: Path) -> None:
    from clawseed_edge.peripherals.serial.flash import FLASH_BASE, FlashVerifyFailed, verify_image

    image = tmp_path / "firmware.bin"
    image.write_bytes(bytes(range(256)) * 20)
    good = {FLASH_BASE + i: b for i, b in enumerate(image.read_bytes())}
    verify_image(FakeTarget(good), image, chunk=1000)
    bad = {**good, FLASH_BASE + 4097: 0}
    with pytest.raises(FlashVerifyFailed, match="0x08001001"):
        verify_image(FakeTarget(bad), image, chunk=1000)


def test_hex_segments_and_elf_left_to_pyocd(tmp_path: Path) -> None:
    from clawseed_edge.peripherals.serial.flash import image_segments

    hexfile = tmp_path / "firmware.hex"
    # Extended linear address 0x0800, then 4 bytes at 0x0010, then end of file.
    hexfile.write_text(":020000040800F2\n:0400100001020304E2\n:00000001FF\n")
    assert image_segments(hexfile) == [(0x0800_0010, b"\x01\x02\x03\x04")]
    elf = tmp_path / "firmware.elf"
    elf.write_bytes(b"\x7fELF")
    assert image_segments(elf) == []

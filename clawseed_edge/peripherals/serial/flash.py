"""Flash MicroPython itself onto a Nucleo through pyocd, used as a library.

The Nucleo targets (``stm32f401retx``, ``stm32f411retx``, ``stm32l476rgtx``, ``stm32g0b1retx``)
are not built into pyocd: each needs its CMSIS device pack, which cannot be fetched offline.
:func:`resolve_target` accepts a pack file, else a pack that pyocd's pack manager already
installed, else says exactly which pack is needed and how to get it. :func:`find_probe` never
waits for a probe (pyocd blocks by default): no probe is an error within seconds. Steps are
ordered so the cheap checks fail first: the image file, the target, the probe, then the flash.

pyocd is an optional dependency (``pip install 'clawseed-edge[flash]'``), imported on use.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clawseed_edge.api import BoardNotFound, HardwareError

from ..boards import BoardSpec

__all__ = [
    "FLASH_BASE",
    "FlashResult",
    "FlashVerifyFailed",
    "find_probe",
    "flash_firmware",
    "image_segments",
    "pack_for_target",
    "resolve_target",
    "verify_image",
]

FLASH_BASE = 0x0800_0000  # where a raw .bin image goes on every STM32
PROBE_SCAN_TIMEOUT_S = 10.0
IMAGE_SUFFIXES = (".hex", ".bin", ".elf", ".axf")

# The CMSIS device family pack that describes each Nucleo's MCU.
_PACKS = {
    "stm32f4": "Keil.STM32F4xx_DFP",
    "stm32l4": "Keil.STM32L4xx_DFP",
    "stm32g0": "Keil.STM32G0xx_DFP",
}


@dataclass
class FlashResult:
    """What was flashed where."""

    target: str
    probe: str
    image: str
    bytes: int


def _import_pyocd() -> Any:
    try:
        import pyocd
    except ImportError as exc:
        raise HardwareError(
            "flashing needs pyocd: `pip install 'clawseed-edge[flash]'`; or copy the image "
            "onto the board's USB drive (see docs/nucleo.md)"
        ) from exc
    return pyocd


def pack_for_target(target: str) -> str:
    """The CMSIS pack name for a pyocd target (``Keil.STM32F4xx_DFP``)."""
    return _PACKS.get(target[:7].lower(), f"the CMSIS device pack for {target}")


def resolve_target(target: str, pack: Path | None = None) -> str:
    """Make ``target`` known to pyocd; returns its name.

    Raises:
        HardwareError: The pack file is missing or is not a CMSIS pack, or (without one) pyocd
            neither has the target built in nor an installed pack for it; the message names the
            pack and says how to get it.
    """
    _import_pyocd()
    from pyocd.target import TARGET
    from pyocd.target.pack.pack_target import ManagedPacks, PackTargets

    name = target.lower()
    if pack is not None:
        if not pack.is_file():
            raise HardwareError(f"pack file {pack} does not exist; pass the .pack you downloaded")
        try:
            PackTargets.populate_targets_from_pack([str(pack)])
        except Exception as exc:  # pyocd raises zipfile/XML/its own errors for a bad file
            raise HardwareError(f"{pack} is not a readable CMSIS pack: {exc}") from exc
        if name not in TARGET:
            raise HardwareError(
                f"{pack} does not describe {target}; it needs {pack_for_target(target)}"
            )
        return name
    if name in TARGET:
        return name
    try:
        installed = {t.part_number.lower() for t in ManagedPacks.get_installed_targets()}
    except Exception:  # no pack index on this machine yet
        installed = set()
    if name in installed:
        ManagedPacks.populate_target(name)
        return name
    raise HardwareError(
        f"pyocd has no built-in support for {target}: it needs the CMSIS pack "
        f"{pack_for_target(target)}, which cannot be fetched offline. On a machine with "
        f"internet run `pyocd pack install {target}` (then copy pyocd's pack cache), or "
        "download the .pack file and pass --pack FILE.pack"
    )


def find_probe(unique_id: str | None = None, timeout_s: float = PROBE_SCAN_TIMEOUT_S) -> str:
    """The unique id of the one connected debug probe (or of ``unique_id``).

    Never blocks waiting for a probe; the USB scan itself is bounded by ``timeout_s``.

    Raises:
        BoardNotFound: No probe, not the one asked for, several (listed), or the scan hung.
    """
    _import_pyocd()
    from pyocd.core.helpers import ConnectHelper

    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="probe-scan")
    try:
        future = pool.submit(ConnectHelper.get_all_connected_probes, blocking=False)
        try:
            probes = future.result(timeout=timeout_s)
        except concurrent.futures.TimeoutError:
            raise BoardNotFound(
                f"the USB scan for debug probes did not finish within {timeout_s:g} s; unplug "
                "and replug the board"
            ) from None
    finally:
        pool.shutdown(wait=False)
    ids = [str(p.unique_id) for p in probes]
    if unique_id is not None:
        if unique_id in ids:
            return unique_id
        raise BoardNotFound(
            f"no debug probe with id {unique_id}; connected: {', '.join(ids) or 'none'}"
        )
    if not ids:
        raise BoardNotFound(
            "no debug probe found: plug the Nucleo in over its ST-LINK USB port (a data cable); "
            "on Linux the user needs access to the ST-LINK (udev rules, see docs/nucleo.md)"
        )
    if len(ids) > 1:
        raise BoardNotFound(f"several debug probes: {', '.join(ids)}; pass --probe UID")
    return ids[0]


class FlashVerifyFailed(HardwareError):
    """What the flash holds after programming differs from the image."""

    code = "flash_verify_failed"


def image_segments(image: Path) -> list[tuple[int, bytes]]:
    """(address, bytes) runs of a .bin (at :data:`FLASH_BASE`) or .hex image; [] for ELF.

    An ELF image is programmed section by section by pyocd and not re-read here.
    """
    suffix = image.suffix.lower()
    if suffix == ".bin":
        return [(FLASH_BASE, image.read_bytes())]
    if suffix == ".hex":
        from intelhex import IntelHex  # a pyocd dependency

        hexfile = IntelHex(str(image))
        return [(lo, hexfile.tobinstr(lo, hi - 1)) for lo, hi in hexfile.segments()]
    return []


def verify_image(target: Any, image: Path, chunk: int = 4096) -> None:
    """Read the flash back and compare it with ``image``, ``chunk`` bytes at a time.

    Raises:
        FlashVerifyFailed: The first differing address is named.
    """
    for start, data in image_segments(image):
        for offset in range(0, len(data), chunk):
            want = data[offset : offset + chunk]
            got = bytes(target.read_memory_block8(start + offset, len(want)))
            if got != want:
                first = next(i for i, (a, b) in enumerate(zip(got, want, strict=True)) if a != b)
                raise FlashVerifyFailed(
                    f"verification failed at 0x{start + offset + first:08x}: the flash does not "
                    "hold the image; flash again, and if it repeats, erase the chip first"
                )


def check_image(image: Path) -> None:
    """Raises HardwareError when ``image`` is missing or not a flashable file type."""
    if not image.is_file():
        raise HardwareError(f"firmware image {image} does not exist")
    if image.suffix.lower() not in IMAGE_SUFFIXES:
        raise HardwareError(
            f"{image} is not a firmware image ({', '.join(IMAGE_SUFFIXES)}); MicroPython's "
            "downloads for Nucleo boards are .hex or .bin (.dfu is for USB DFU, not ST-LINK)"
        )


def flash_firmware(
    board: BoardSpec,
    image: Path,
    *,
    pack: Path | None = None,
    probe: str | None = None,
    progress: Callable[[float], None] | None = None,
) -> FlashResult:
    """Erase, program and verify ``image`` on ``board``, then reset it.

    Blocking (seconds to a minute); call it from a thread or the CLI.

    Raises:
        HardwareError: Bad image, target without its pack (see :func:`resolve_target`),
            programming or verification failed.
        BoardNotFound: No probe (see :func:`find_probe`).
    """
    if not board.flash_target:
        raise HardwareError(f"board {board.id} has no flash target")
    check_image(image)
    target = resolve_target(board.flash_target, pack)
    unique_id = find_probe(probe)
    from pyocd.core.helpers import ConnectHelper
    from pyocd.flash.file_programmer import FileProgrammer

    session = ConnectHelper.session_with_chosen_probe(
        blocking=False, unique_id=unique_id, target_override=target, auto_open=True
    )
    if session is None:
        raise BoardNotFound(f"debug probe {unique_id} went away before flashing")
    try:
        with session:
            programmer = FileProgrammer(session, progress=progress, chip_erase="auto")
            kwargs = {"base_address": FLASH_BASE} if image.suffix.lower() == ".bin" else {}
            programmer.program(str(image), **kwargs)
            verify_image(session.board.target, image)
            session.board.target.reset()
    except (BoardNotFound, FlashVerifyFailed):
        raise
    except Exception as exc:  # pyocd's errors: transfer faults, flash algo failures
        raise HardwareError(f"flashing {image.name} to {board.id} failed: {exc}") from exc
    return FlashResult(target, unique_id, str(image), image.stat().st_size)

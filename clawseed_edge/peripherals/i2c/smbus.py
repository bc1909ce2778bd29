"""The part of smbus2's ``SMBus`` our drivers use, and what its errors mean.

Drivers call these methods and nothing else, so :class:`smbus2.SMBus` on ``/dev/i2c-N`` and
:class:`~clawseed_edge.peripherals.i2c.sim.SimI2CBus` are interchangeable: the same driver code
runs on a Pi and in a test.

The kernel reports I2C problems as ``errno`` values (Linux ``Documentation/i2c/fault-codes``);
:func:`translate_os_error` turns each into an api error that says what to do.
"""

from __future__ import annotations

import errno
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from clawseed_edge.api import (
    BusAccessDenied,
    BusLost,
    BusNotFound,
    DeviceNoResponse,
    HardwareError,
)

__all__ = [
    "ENABLE_I2C_ADVICE",
    "LOST_ERRNOS",
    "NACK_ERRNOS",
    "TRANSIENT_ERRNOS",
    "SMBusLike",
    "bare_read",
    "translate_open_error",
    "translate_os_error",
]

ENABLE_I2C_ADVICE = (
    "enable I2C with `sudo raspi-config nonint do_i2c 0` (or add `dtparam=i2c_arm=on` to "
    "/boot/firmware/config.txt) and reboot"
)

# The address phase got no ACK: ENXIO per the kernel's fault codes, EREMOTEIO from i2c-bcm2835.
NACK_ERRNOS = frozenset({errno.ENXIO, errno.EREMOTEIO})
# The adapter is gone: its file descriptor no longer reaches a device.
LOST_ERRNOS = frozenset({errno.ENODEV, errno.ESHUTDOWN, errno.EBADF})
# Arbitration lost, a stuck clock, a glitch: worth another try.
TRANSIENT_ERRNOS = frozenset({errno.EAGAIN, errno.ETIMEDOUT, errno.EIO})


@runtime_checkable
class SMBusLike(Protocol):
    """The subset of :class:`smbus2.SMBus` that drivers use (same names, same arguments)."""

    def read_byte(self, i2c_addr: int, force: bool | None = None) -> int: ...

    def write_byte(self, i2c_addr: int, value: int, force: bool | None = None) -> None: ...

    def write_quick(self, i2c_addr: int, force: bool | None = None) -> None: ...

    def read_byte_data(self, i2c_addr: int, register: int, force: bool | None = None) -> int: ...

    def write_byte_data(
        self, i2c_addr: int, register: int, value: int, force: bool | None = None
    ) -> None: ...

    def read_i2c_block_data(
        self, i2c_addr: int, register: int, length: int, force: bool | None = None
    ) -> list[int]: ...

    def write_i2c_block_data(
        self, i2c_addr: int, register: int, data: Sequence[int], force: bool | None = None
    ) -> None: ...

    def i2c_rdwr(self, *i2c_msgs: Any) -> None: ...

    def close(self) -> None: ...


def bare_read(bus: SMBusLike, address: int, length: int) -> list[int]:
    """Read ``length`` bytes with no register write first (chips without registers, or a
    result fetched after a command), as one ``i2c_rdwr`` transfer."""
    from smbus2 import i2c_msg  # plain ctypes; the simulated bus fills the same buffers

    msg = i2c_msg.read(address, length)
    bus.i2c_rdwr(msg)
    data: list[int] = list(msg)  # type: ignore[call-overload]  # smbus2's stub types __iter__ as int
    return data


def translate_open_error(exc: OSError, bus: int) -> HardwareError:
    """The api error for failing to open ``/dev/i2c-<bus>``."""
    path = f"/dev/i2c-{bus}"
    if exc.errno in (errno.ENOENT, errno.ENXIO, errno.ENODEV):
        return BusNotFound(
            f"I2C bus {bus} does not exist ({path} is missing): {ENABLE_I2C_ADVICE}; "
            "`ls /dev/i2c-*` lists the buses this machine has"
        )
    if exc.errno in (errno.EACCES, errno.EPERM):
        return BusAccessDenied(
            f"permission denied opening {path}: add the user to the i2c group "
            "(`sudo usermod -aG i2c $USER`, then log in again)"
        )
    return HardwareError(f"cannot open {path}: {exc.strerror or exc}")


def translate_os_error(
    exc: OSError, bus: int, address: int | None, what: str, found: Sequence[int] | None = None
) -> HardwareError:
    """The api error for an ``OSError`` from a transfer.

    Args:
        exc: What smbus2 (or the simulated bus) raised.
        bus: The bus number.
        address: The 7-bit address addressed, if one.
        what: What was being done (``"reading greenhouse (bme280)"``), for the message.
        found: Addresses a scan found, if one was run, to name in a NACK message.
    """
    at = f" at 0x{address:02x}" if address is not None else ""
    if exc.errno in NACK_ERRNOS:
        seen = ""
        if found is not None:
            listed = ", ".join(f"0x{a:02x}" for a in found) or "nothing"
            seen = f"; i2c_scan finds {listed} on bus {bus}"
        return DeviceNoResponse(
            f"{what}: no device answered{at} on I2C bus {bus} (NACK): check the wiring "
            f"(SDA, SCL, 3.3 V, GND) and the address{seen}"
        )
    if exc.errno in LOST_ERRNOS or exc.errno == errno.ENOENT:
        return BusLost(
            f"{what}: I2C bus {bus} went away during the transfer ({exc.strerror or exc}); "
            "check the adapter and cable; the next access opens the bus again"
        )
    return HardwareError(f"{what}: I2C bus {bus}{at} failed: {exc.strerror or exc}")

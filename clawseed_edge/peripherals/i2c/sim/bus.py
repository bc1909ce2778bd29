"""``SimI2CBus``: a register-level simulated I2C bus with the methods of smbus2's ``SMBus``.

Chips on it are models that see what a real chip sees: write transactions (a register pointer
and data bytes) and read transactions (bytes clocked out). Every ``SMBus`` method is mapped onto
those transactions exactly as the kernel puts it on the wire (``read_byte_data`` is a one-byte
write of the register then a read after a repeated start), so a driver that works here sends
the bytes a real chip expects.

Faults are injected on the bus, where real ones appear: an address nobody answers (NACK, as
``OSError(EREMOTEIO)`` like i2c-bcm2835), :meth:`SimI2CBus.inject` for a NACK or a vanished
adapter (``ENODEV``) after N transfers, :attr:`SimI2CBus.present` for a missing
``/dev/i2c-N``, :attr:`SimI2CBus.denied` for a user outside the ``i2c`` group.
"""

from __future__ import annotations

import ctypes
import errno
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["ChipModel", "RegisterChipModel", "SimI2CBus"]

I2C_M_RD = 0x0001


class ChipModel:
    """A simulated chip: it receives write transactions and answers read transactions.

    Subclasses override :meth:`write` and :meth:`read`; raising ``OSError(EREMOTEIO)`` from
    either is a NACK (a real SHT31 NACKs a read while no measurement is pending).
    """

    def write(self, data: bytes) -> None:
        """A write transaction; empty for a quick write (address only)."""

    def read(self, length: int) -> bytes:
        """A read transaction of ``length`` bytes."""
        return bytes(length)

    def set(self, **values: float) -> None:
        """Set what the chip measures (``temperature=21.5``); each model names its keys."""
        raise TypeError(f"{type(self).__name__} has no settable readings")


def nack() -> OSError:
    """The error the kernel returns when an address or a byte is not acknowledged."""
    return OSError(errno.EREMOTEIO, os.strerror(errno.EREMOTEIO))


class RegisterChipModel(ChipModel):
    """A chip with 8-bit registers behind an auto-incrementing pointer (most sensors)."""

    def __init__(self) -> None:
        self.registers = bytearray(256)
        self.pointer = 0

    def write(self, data: bytes) -> None:
        if not data:
            return
        self.pointer = data[0]
        for value in data[1:]:
            self.write_register(self.pointer, value)
            self.pointer = (self.pointer + 1) & 0xFF

    def read(self, length: int) -> bytes:
        out = bytearray()
        for _ in range(length):
            out.append(self.read_register(self.pointer))
            self.pointer = (self.pointer + 1) & 0xFF
        return bytes(out)

    def write_register(self, register: int, value: int) -> None:
        self.registers[register] = value

    def read_register(self, register: int) -> int:
        return self.registers[register]


@dataclass(slots=True)
class _Fault:
    code: int
    address: int | None
    after: int
    count: int


class SimI2CBus:
    """A simulated I2C bus: chip models by address and injectable faults.

    Args:
        number: The bus number it stands for (``/dev/i2c-<number>``).

    Attributes:
        present: False makes opening fail as a missing ``/dev/i2c-N`` and transfers fail as a
            vanished adapter.
        denied: True makes opening fail with ``EACCES``.
        transfers: How many transfers (ioctls) were made, for tests.
        opens: How many times the bus was opened.
    """

    def __init__(self, number: int = 1) -> None:
        self.number = number
        self.devices: dict[int, ChipModel] = {}
        self.present = True
        self.denied = False
        self.transfers = 0
        self.opens = 0
        self._faults: list[_Fault] = []
        self._lock = threading.Lock()

    def attach(self, address: int, model: ChipModel) -> ChipModel:
        """Put ``model`` on the bus at ``address``; returns the model."""
        self.devices[address] = model
        return model

    def detach(self, address: int) -> None:
        """Take the chip at ``address`` off the bus (it NACKs from now on)."""
        self.devices.pop(address, None)

    def inject(
        self,
        code: int = errno.EREMOTEIO,
        *,
        address: int | None = None,
        after: int = 0,
        count: int = 1,
    ) -> None:
        """Make the bus fail ``count`` transfers with ``OSError(code)``, after ``after`` good
        ones, to ``address`` only (or any). ``ENODEV`` is an adapter that went away."""
        self._faults.append(_Fault(code, address, after, count))

    def opener(self) -> Callable[[], SimI2CBus]:
        """What :class:`~clawseed_edge.peripherals.i2c.bus.I2CBus` calls to open the bus."""

        def open_bus() -> SimI2CBus:
            path = f"/dev/i2c-{self.number}"
            if not self.present:
                raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)
            if self.denied:
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), path)
            self.opens += 1
            return self

        return open_bus

    # --- the SMBus methods --------------------------------------------------------------------

    def read_byte(self, i2c_addr: int, force: bool | None = None) -> int:
        return self._transfer(i2c_addr, [], 1)[0]

    def write_byte(self, i2c_addr: int, value: int, force: bool | None = None) -> None:
        self._transfer(i2c_addr, [(_byte(value),)], 0)

    def write_quick(self, i2c_addr: int, force: bool | None = None) -> None:
        self._transfer(i2c_addr, [()], 0)

    def read_byte_data(self, i2c_addr: int, register: int, force: bool | None = None) -> int:
        return self._transfer(i2c_addr, [(_byte(register),)], 1)[0]

    def write_byte_data(
        self, i2c_addr: int, register: int, value: int, force: bool | None = None
    ) -> None:
        self._transfer(i2c_addr, [(_byte(register), _byte(value))], 0)

    def read_i2c_block_data(
        self, i2c_addr: int, register: int, length: int, force: bool | None = None
    ) -> list[int]:
        if not 0 < length <= 32:  # the SMBus block limit, as smbus2 enforces it
            raise ValueError("Desired block length over 32 bytes")
        return list(self._transfer(i2c_addr, [(_byte(register),)], length))

    def write_i2c_block_data(
        self, i2c_addr: int, register: int, data: Sequence[int], force: bool | None = None
    ) -> None:
        if len(data) > 32:
            raise ValueError("Data length cannot exceed 32 bytes")
        self._transfer(i2c_addr, [(_byte(register), *(_byte(b) for b in data))], 0)

    def i2c_rdwr(self, *i2c_msgs: Any) -> None:
        """Combined transfers of smbus2 ``i2c_msg`` objects; read buffers are filled in place."""
        with self._lock:
            self._begin(i2c_msgs[0].addr if i2c_msgs else None)
            for msg in i2c_msgs:
                model = self._chip(msg.addr)
                if msg.flags & I2C_M_RD:
                    data = model.read(msg.len)
                    ctypes.memmove(msg.buf, data, msg.len)
                else:
                    model.write(bytes(msg.buf[: msg.len]))

    def close(self) -> None:
        """Closing a handle changes nothing on the simulated wires."""

    # --- internals ----------------------------------------------------------------------------

    def _transfer(self, address: int, writes: list[tuple[int, ...]], read: int) -> bytes:
        with self._lock:
            self._begin(address)
            model = self._chip(address)
            for data in writes:
                model.write(bytes(data))
            return model.read(read) if read else b""

    def _begin(self, address: int | None) -> None:
        self.transfers += 1
        if not self.present:
            raise OSError(errno.ENODEV, os.strerror(errno.ENODEV))
        for fault in self._faults:
            if fault.address is not None and fault.address != address:
                continue
            if fault.after > 0:
                fault.after -= 1
                continue
            fault.count -= 1
            if fault.count <= 0:
                self._faults.remove(fault)
            raise OSError(fault.code, os.strerror(fault.code))

    def _chip(self, address: int) -> ChipModel:
        model = self.devices.get(address)
        if model is None:
            raise nack()
        return model


def _byte(value: int) -> int:
    if not 0 <= value <= 0xFF:
        raise ValueError(f"{value} is not a byte")
    return value

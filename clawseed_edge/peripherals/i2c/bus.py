"""``I2CBus``: one I2C bus (``/dev/i2c-N`` or a simulated one) behind one worker thread.

Every access to the bus runs on the bus's own worker thread, one call at a time and under a
lock: smbus2 calls are blocking ioctls, a driver's read is a sequence of them (start a
conversion, wait, fetch) that must not interleave with another driver's on the same wires, and
the event loop must never wait on the kernel.

Failures are retried a bounded number of times when another try can help (a NACK from a chip
that is busy, arbitration lost, a glitch) and then translated (:mod:`.smbus`) into an api error
that says what to do. A bus that went away is closed; the next call opens it again.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from clawseed_edge.api import BusLost, HardwareError, Lifecycle, ResourceClosed

from ..worker import BlockingWorker, Repeating
from .smbus import (
    LOST_ERRNOS,
    NACK_ERRNOS,
    TRANSIENT_ERRNOS,
    SMBusLike,
    translate_open_error,
    translate_os_error,
)

__all__ = ["SCAN_RANGE", "I2CBus", "smbus2_opener"]

log = logging.getLogger(__name__)
T = TypeVar("T")

SCAN_RANGE = range(0x08, 0x78)
"""Addresses a scan probes: i2cdetect's default, without the reserved 0x00-0x07 and 0x78-0x7F."""

# i2cdetect reads from these (EEPROMs may latch a quick write as a write), quick-writes the rest
# (some chips, an SHT31 among them, NACK a read when no measurement is pending).
_READ_PROBE = frozenset({*range(0x30, 0x38), *range(0x50, 0x60)})


def smbus2_opener(number: int) -> Callable[[], SMBusLike]:
    """An opener of the real ``/dev/i2c-<number>`` through smbus2 (imported when called)."""

    def open_bus() -> SMBusLike:
        from smbus2 import SMBus

        bus: SMBusLike = SMBus(number)
        return bus

    return open_bus


class I2CBus:
    """One I2C bus shared by the drivers on it.

    Args:
        number: The bus number N of ``/dev/i2c-N`` (1 on a Pi's header pins 3/5).
        opener: Makes the SMBus-like object; default: smbus2 on ``/dev/i2c-<number>``. The
            simulated bus passes its own, so the same retry and translation code runs in tests.
        attempts: Tries per call for NACKs and transient errors (at least 1).
        retry_delay_s: Wait between tries, seconds (a busy chip needs a moment).

    The lifecycle is :class:`~clawseed_edge.api.Lifecycle`: :meth:`open`, calls, :meth:`aclose`;
    a closed bus refuses calls with :class:`~clawseed_edge.api.ResourceClosed`.
    """

    def __init__(
        self,
        number: int,
        *,
        opener: Callable[[], SMBusLike] | None = None,
        attempts: int = 3,
        retry_delay_s: float = 0.005,
    ) -> None:
        self.number = number
        self._opener = opener or smbus2_opener(number)
        self._attempts = max(1, attempts)
        self._retry_delay_s = retry_delay_s
        self._handle: SMBusLike | None = None
        self._lock = threading.Lock()
        self._worker: BlockingWorker | None = None
        self.state = Lifecycle.UNOPENED

    def __repr__(self) -> str:
        return f"I2CBus({self.number}, {self.state.value})"

    # --- lifecycle ----------------------------------------------------------------------------

    async def open(self) -> None:
        """Start the worker and open the bus.

        Raises:
            BusNotFound: No ``/dev/i2c-N`` (the message says how to enable I2C).
            BusAccessDenied: The user is not in the ``i2c`` group.
            ResourceClosed: The bus was closed.

        Safe to cancel: the worker finishes opening and :meth:`aclose` releases it.
        """
        if self.state is Lifecycle.OPEN:
            return
        self._refuse_if_closed()
        self._worker = BlockingWorker(f"i2c-{self.number}")
        self.state = Lifecycle.OPEN
        try:
            await self._submit(self._ensure_handle)
        except BaseException:
            await self.aclose()
            raise

    async def aclose(self) -> None:
        """Close the bus and stop the worker (waiting at most 5 s). Idempotent; safe to cancel."""
        if self.state is Lifecycle.CLOSED:
            return
        self.state = Lifecycle.CLOSED
        worker, self._worker = self._worker, None
        if worker is not None:
            try:
                # The handle is closed on its own thread; a transfer stuck in the kernel must
                # not hold up shutdown (the worker is a daemon thread).
                async with asyncio.timeout(5):
                    await worker.run(self._drop_handle)
            except TimeoutError:
                log.warning("i2c-%d: closing the bus timed out; leaving it", self.number)
            finally:
                await worker.aclose()

    async def __aenter__(self) -> I2CBus:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # --- calls --------------------------------------------------------------------------------

    async def call(self, fn: Callable[[SMBusLike], T], *, what: str, address: int | None) -> T:
        """Run ``fn(bus)`` on the worker, under the bus lock, with retries and translation.

        ``fn`` is a whole driver operation (start a conversion, wait, fetch): it is retried as
        a unit, so a retry never resumes a half-done sequence.

        Args:
            fn: The operation; it may raise ``OSError`` (translated) or api errors (passed on).
            what: What is being done, for error messages (``"reading greenhouse (bme280)"``).
            address: The device's address, for error messages and the NACK scan.

        Raises:
            DeviceNoResponse: NACK after every try (the message lists what a scan finds).
            BusLost: The bus went away; the next call opens it again.
            BusNotFound / BusAccessDenied: The bus cannot be (re)opened.
            HardwareError: Another bus failure, or the bus is not open.

        Safe to cancel: an operation already on the worker completes there.
        """
        return await self._submit(self.call_sync, fn, what, address)

    def repeat(
        self,
        fn: Callable[[SMBusLike], Any],
        *,
        what: str,
        address: int | None,
        ready_in_s: float,
        every_s: float,
    ) -> Repeating:
        """:meth:`call` made by the worker on its own every ``every_s`` seconds (see
        :meth:`~..worker.BlockingWorker.repeat`); each outcome waits in the returned object.

        Raises:
            HardwareError: The bus is not open.
        """
        self._refuse_if_closed()
        worker = self._worker
        if worker is None:
            raise HardwareError(f"i2c-{self.number} is not open")
        return worker.repeat(lambda: self.call_sync(fn, what, address), ready_in_s, every_s)

    def call_sync(self, fn: Callable[[SMBusLike], T], what: str, address: int | None) -> T:
        """:meth:`call` on the calling thread (the worker, or an exit hook with no loop)."""
        with self._lock:
            for attempt in range(1, self._attempts + 1):
                handle = self._ensure_handle()
                try:
                    return fn(handle)
                except OSError as exc:
                    if exc.errno in LOST_ERRNOS:
                        self._drop_handle()
                        raise translate_os_error(exc, self.number, address, what) from exc
                    retry = exc.errno in NACK_ERRNOS or exc.errno in TRANSIENT_ERRNOS
                    if not retry or attempt == self._attempts:
                        found = self._scan_locked() if exc.errno in NACK_ERRNOS else None
                        raise translate_os_error(exc, self.number, address, what, found) from exc
                    log.debug("i2c-%d %s: %s, try %d", self.number, what, exc, attempt + 1)
                time.sleep(self._retry_delay_s)
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def scan(self) -> list[int]:
        """The addresses that acknowledge on this bus, ascending (i2cdetect's probes).

        Raises:
            BusLost, BusNotFound, BusAccessDenied, HardwareError: As :meth:`call`.
        """
        return await self._submit(self._scan)

    def _scan(self) -> list[int]:
        with self._lock:
            self._ensure_handle()
            return self._scan_locked()

    def _scan_locked(self) -> list[int]:
        handle = self._handle
        if handle is None:
            return []
        found = []
        for address in SCAN_RANGE:
            try:
                if address in _READ_PROBE:
                    handle.read_byte(address)
                else:
                    handle.write_quick(address)
            except OSError as exc:
                if exc.errno in LOST_ERRNOS:
                    self._drop_handle()
                    raise BusLost(
                        f"I2C bus {self.number} went away during a scan ({exc.strerror or exc})"
                    ) from exc
                continue
            found.append(address)
        return found

    # --- internals ----------------------------------------------------------------------------

    def _refuse_if_closed(self) -> None:
        if self.state is Lifecycle.CLOSED:
            raise ResourceClosed(f"I2C bus {self.number} was closed; make a new I2CBus")

    async def _submit(self, fn: Callable[..., T], *args: object) -> T:
        self._refuse_if_closed()
        worker = self._worker
        if worker is None:
            raise HardwareError(f"I2C bus {self.number} is not open; call open() first")
        return await worker.run(fn, *args)

    def _ensure_handle(self) -> SMBusLike:
        if self._handle is None:
            try:
                self._handle = self._opener()
            except OSError as exc:
                raise translate_open_error(exc, self.number) from exc
        return self._handle

    def _drop_handle(self) -> None:
        handle, self._handle = self._handle, None
        if handle is not None:
            try:
                handle.close()
            except OSError:  # the adapter is gone; its file descriptor is released anyway
                pass

"""``PiGpio``: the Raspberry Pi's GPIO header as a Peripheral, through gpiozero.

The Pi header's backend of the shared wired-device model (:class:`~..wired.WiredBoard`): the
devices, their checks, tools, blinking and events are those of every board; here a value reaches
a pin through a gpiozero device. The same code runs on hardware (lgpio pins) and in
simulation/tests (gpiozero's MockFactory with PWM pins); only the pin factory differs, and it is
chosen once (:func:`~.pins.make_pin_factory`).

Threading: every gpiozero call runs on one worker thread per PiGpio (a
:class:`~clawseed_edge.peripherals.worker.BlockingWorker`, the class every blocking bus uses).
On lgpio each call is a syscall, and some gpiozero calls block for longer (closing a device joins
its background threads; constructing a Button starts lgpio's alert thread); the worker keeps the
event loop free and also serialises access to gpiozero, whose devices are not documented as safe
to drive from several threads at once. On mock pins the hop costs tens of microseconds
(``benchmarks/bench_pin_latency.py`` measures it). Input edges arrive on gpiozero's threads and
are handed to the loop with ``call_soon_threadsafe``.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import time
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

from clawseed_edge.api import (
    HardwareError,
    HealthStatus,
    Lifecycle,
    PeripheralClosed,
    PinModeUnsupported,
)

from ..boards import BoardSpec, default_registry
from ..wired import InputEvent, WiredBoard, WiredDevice
from ..worker import BlockingWorker
from .config import HardwareConfig
from .devices import GpioDevice
from .pins import make_pin_factory

__all__ = ["PiGpio"]

log = logging.getLogger(__name__)
T = TypeVar("T")


class PiGpio(WiredBoard[GpioDevice]):
    """GPIO devices on a Pi-like board as a :class:`~clawseed_edge.api.Peripheral`.

    The Pi header's backend of :class:`~..wired.WiredBoard`: a value reaches a pin through a
    gpiozero device on the pin factory, on the worker thread.

    Args:
        hardware: The board id, the pin factory kind and the devices.
        name: The peripheral's name (``pi``).
        source: The config file name, for error messages.
        devices_key: Where the devices sit in that file (``peripherals[1].devices``).
        wall_clock: Unix seconds stamped on input events.
        board: The board spec; looked up in the shipped registry when omitted.
        sim: Run on mock pins; defaults to true for the ``sim`` board.
        pin_factory: A gpiozero pin factory to use instead of making one (tests pass a fresh
            MockFactory); it is not closed by :meth:`disconnect`.
        shutdown_timeout_s: How long :meth:`disconnect` (and a failed connect) waits for the
            worker thread to finish releasing the pins, seconds.

    Raises:
        BoardNotFound: Unknown board id.
        HardwareError: The board is a microcontroller (it is driven over serial, not gpiozero).
        ConfigInvalid, PinInvalid, PinReserved, PinInUse, PinModeUnsupported: Bad wiring, from
            :func:`~..wired.validate_devices`.
    """

    def __init__(
        self,
        hardware: HardwareConfig,
        *,
        name: str = "pi",
        source: str = "config.toml",
        devices_key: str = "devices",
        wall_clock: Callable[[], float] = time.time,
        board: BoardSpec | None = None,
        sim: bool | None = None,
        pin_factory: Any = None,
        shutdown_timeout_s: float = 5.0,
    ) -> None:
        spec = board or default_registry().get(hardware.board)
        if spec.family == "mcu":
            raise HardwareError(
                f"board {spec.id} is a microcontroller: it is driven over USB serial by its "
                "firmware, not through the Pi's GPIO; set [hardware] board to the Pi's id"
            )
        self.sim = (spec.family == "sim") if sim is None else sim
        super().__init__(
            spec,
            hardware,
            name=name,
            source=source,
            devices_key=devices_key,
            wall_clock=wall_clock,
        )
        self.pin_factory_kind = hardware.pin_factory
        self._factory = pin_factory
        self._owns_factory = pin_factory is None
        self.shutdown_timeout_s = shutdown_timeout_s
        self._worker: BlockingWorker | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._atexit: Callable[[], None] | None = None

    def _make_device(self, wired: WiredDevice) -> GpioDevice:
        return GpioDevice(wired)

    # --- lifecycle ----------------------------------------------------------------------------

    @property
    def connected(self) -> bool:
        return self._state is Lifecycle.OPEN

    @property
    def pin_factory(self) -> Any:
        """The gpiozero pin factory in use (None before :meth:`connect`)."""
        return self._factory

    async def connect(self, *, at_safe: bool = False) -> None:
        """Create the pin factory (unless given) and every device, at its initial value.

        Args:
            at_safe: Create every output at its safe value instead (``estop``: a device with
                ``initial = "on"`` and ``safe = "off"`` must never go on on the way to off).

        Raises:
            PeripheralClosed: It was disconnected (make a new PiGpio).
            HardwareError: A device could not be created (PinInUse, PinModeUnsupported,
                PinFactoryUnavailable when lgpio is missing ...).

        Safe to cancel: on cancellation or any error, whatever was claimed is released on the
        same worker thread (after the creation it queued behind) before the worker stops, so a
        new PiGpio (or this one, connecting again) can claim the same pins at once.
        """
        if self._state is Lifecycle.OPEN:
            return
        if self._state is not Lifecycle.UNOPENED:
            raise PeripheralClosed(
                f"peripheral {self.name!r} was disconnected; make a new PiGpio to use its pins"
            )
        if self._worker is not None:  # a second worker would claim the same pins twice
            raise HardwareError(f"peripheral {self.name!r} is already connecting")
        self._loop = asyncio.get_running_loop()
        self._worker = BlockingWorker(f"gpio-{self.name}")
        try:
            await self._worker.run(self._open_all, at_safe)
        except BaseException:
            await self._abandon_connect()
            raise
        if self.state is Lifecycle.CLOSED:  # disconnect() was called while we connected
            await self._abandon_connect()
            raise PeripheralClosed(f"peripheral {self.name!r} was disconnected while connecting")
        self._state = Lifecycle.OPEN
        ref = weakref.ref(self)

        def at_exit() -> None:
            me = ref()
            if me is not None:
                me.release_sync()

        self._atexit = at_exit
        atexit.register(at_exit)

    async def _abandon_connect(self) -> None:
        """Release what a failed or cancelled connect claimed, then stop the worker."""
        worker = self._worker
        assert worker is not None
        self._worker = None
        # Nothing stays claimed, so a failed connect may be retried; a disconnect() that came
        # meanwhile (CLOSED) stays final.
        # Queued behind the creation (FIFO): it closes whatever was created, on the same
        # thread, even when the caller stopped waiting for the creation.
        release = asyncio.ensure_future(worker.run(self._close_devices))
        try:
            async with asyncio.timeout(self.shutdown_timeout_s):
                await asyncio.shield(release)
        except (Exception, asyncio.CancelledError) as exc:  # the connect's own error wins
            log.warning("releasing the pins of %s after a failed connect: %r", self.name, exc)
        await worker.aclose(self.shutdown_timeout_s)

    def _open_all(self, at_safe: bool = False) -> None:
        if self._factory is None:
            self._factory = make_pin_factory(self.pin_factory_kind, sim=self.sim)
        opened: list[GpioDevice] = []
        try:
            for dev in self._devices.values():
                dev.open(self._factory, self._on_input_thread, at_safe=at_safe)
                opened.append(dev)
            self._publish_states()
        except BaseException:
            for dev in opened:
                with contextlib.suppress(Exception):
                    dev.close()
            self._close_factory()
            raise

    def _close_devices(self) -> None:
        for dev in self._devices.values():
            with contextlib.suppress(Exception):
                dev.close()
        self._close_factory()

    def _close_factory(self) -> None:
        if self._owns_factory and self._factory is not None:
            with contextlib.suppress(Exception):
                self._factory.close()
            self._factory = None

    async def disconnect(self) -> None:
        """Apply the safe values, close every device and release the pins. Idempotent.

        After it, the pins are inputs again (gpiozero's close); see docs/hardware.md for what
        the outputs do then. Safe to cancel: the release finishes on the worker. The worker
        thread is given ``shutdown_timeout_s`` to finish.
        """
        if self._state is not Lifecycle.OPEN:
            self._state = Lifecycle.CLOSED
            return
        self._state = Lifecycle.CLOSING
        self._blinks.cancel_all()
        worker = self._worker
        try:
            if worker is not None:
                await worker.run(self._release_all)
        finally:
            self._state = Lifecycle.CLOSED
            if self._atexit is not None:
                atexit.unregister(self._atexit)
                self._atexit = None
            if worker is not None:
                self._worker = None
                await worker.aclose(self.shutdown_timeout_s)
            self._hub.close()

    def _release_all(self) -> None:
        errors = self._safe_all()
        for dev in self._devices.values():
            try:
                dev.close()
            except HardwareError as exc:
                errors.append(str(exc))
        self._close_factory()
        if errors:
            raise HardwareError("while releasing the pins: " + "; ".join(errors))

    def release_sync(self) -> None:
        """Apply safe values and close everything on the calling thread (exit hooks only)."""
        if self._state is not Lifecycle.OPEN:
            return
        self._state = Lifecycle.CLOSED
        try:
            self._release_all()
        except HardwareError as exc:
            log.error("%s", exc)

    async def apply_safe_state(self) -> None:
        """Drive every output to its declared safe value (estop, SIGTERM, shutdown).

        Every output is tried even if one fails. Cancels running blinks first.

        Raises:
            HardwareError: Not connected, or some outputs failed (all are named).
        """
        self._require_open()
        self._blinks.cancel_all()
        errors = await self._run(self._safe_all)
        if errors:
            raise HardwareError("safe state not applied to every output: " + "; ".join(errors))

    def apply_safe_state_sync(self) -> None:
        """:meth:`apply_safe_state` on the calling thread, for signal/exit paths with no loop."""
        if self._state is Lifecycle.OPEN:
            errors = self._safe_all()
            if errors:
                log.error("safe state not applied to every output: %s", "; ".join(errors))

    def _safe_all(self) -> list[str]:
        errors: list[str] = []
        for dev in self._devices.values():
            try:
                dev.apply_safe()
            except HardwareError as exc:
                errors.append(str(exc))
        return errors

    async def health_check(self) -> HealthStatus:
        """Healthy when connected and every device is open."""
        if self._state is not Lifecycle.OPEN:
            return HealthStatus(False, f"{self.name}: {self._state.value}")
        closed = [d.name for d in self._devices.values() if d.gpiozero_device is None]
        if closed:
            return HealthStatus(False, f"{self.name}: devices closed: {', '.join(closed)}")
        pins = "mock pins" if self.sim else "lgpio pins"
        return HealthStatus(True, f"{len(self._devices)} devices on {self.board.id} ({pins})")

    # --- the Pi header's side of the shared model -------------------------------------------------

    def _board_line(self) -> str:
        where = "simulated, mock pins" if self.sim else "GPIO through gpiozero"
        return f"Board: {self.board.name} ({self.board.id}), {where}."

    async def _drive(self, dev: GpioDevice, value: float | None) -> float | None:
        return await self._run(dev.write, value)

    async def _sim_level(self, dev: GpioDevice, level: int) -> None:
        # The mock pin, driven as a finger or a PIR would: gpiozero's own edge path follows.
        if not self.sim or self._factory is None:
            await super()._sim_level(dev, level)
            return
        pin = self._factory.pin(dev.pin_name)
        await self._run(pin.drive_high if level else pin.drive_low)

    async def _fetch(self, dev: GpioDevice) -> float | None:
        return await self._run(dev.read)

    async def operate(self, name: str, operation: str, argument: Any) -> float | None:
        """A kind's own operation on ``name``: ``play`` a note, ``set_colour`` to (r, g, b)."""
        dev = self._output(name, operation.replace("_", " "))
        if not getattr(dev.spec, {"play": "tone", "set_colour": "colour"}[operation]):
            raise PinModeUnsupported(f"{name} is a {dev.kind}: it cannot {operation}")
        return await self._run(getattr(dev, operation), argument)

    async def status(self) -> list[dict[str, Any]]:
        """Every device's state (see :meth:`pin_states`), read on the worker thread."""
        self._require_open()
        return await self._run(lambda: [d.state() for d in self._devices.values()])

    # --- internals ----------------------------------------------------------------------------

    def _on_input_thread(self, device: str, pin: str, value: int) -> None:
        # gpiozero's thread (or, on mock pins, whoever drove the pin): stamp it here, hand it
        # to the loop.
        event = InputEvent(device, value, self._wall_clock(), pin)
        self._hub.emit_threadsafe(self._loop, event)

    async def _run(self, fn: Callable[..., T], *args: Any) -> T:
        if self._worker is None:
            self._require_open()  # raises: no worker means not open
        assert self._worker is not None
        return await self._worker.run(self._then_publish, fn, *args)

    def _then_publish(self, fn: Callable[..., T], *args: Any) -> T:
        # On the worker: every operation's effect on the devices reaches the state feed.
        try:
            return fn(*args)
        finally:
            self._publish_states()

    def _publish_states(self) -> None:
        self.publish_all()  # on the worker: the feed is thread-safe

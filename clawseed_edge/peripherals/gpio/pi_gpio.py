"""``PiGpio``: the Raspberry Pi's GPIO header as a Peripheral, through gpiozero.

The same code runs on hardware (lgpio pins) and in simulation/tests (gpiozero's MockFactory with
PWM pins); only the pin factory differs, and it is chosen once (:func:`~.pins.make_pin_factory`).

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
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from clawseed_edge.api import (
    DeviceNotFound,
    DeviceState,
    HardwareError,
    HealthStatus,
    Lifecycle,
    PeripheralClosed,
    PinModeUnsupported,
    StateFeed,
    Tool,
    ToolArgumentsInvalid,
)

from ..boards import BoardSpec, default_registry
from ..worker import BlockingWorker
from .config import HardwareConfig, validate_devices
from .devices import BlinkTasks, GpioDevice, describe_wiring
from .inputs import EventHub, GpioEventsMixin
from .kinds import blink_out_of_bounds
from .pins import make_pin_factory
from .toolset import build_tools

__all__ = ["PiGpio"]

log = logging.getLogger(__name__)
T = TypeVar("T")


class PiGpio(GpioEventsMixin):
    """GPIO devices on a Pi-like board as a :class:`~clawseed_edge.api.Peripheral`.

    Args:
        hardware: The board id, the pin factory kind and the devices.
        board: The board spec; looked up in the shipped registry when omitted.
        name: The peripheral's name (``pi``).
        sim: Run on mock pins; defaults to true for the ``sim`` board.
        pin_factory: A gpiozero pin factory to use instead of making one (tests pass a fresh
            MockFactory); it is not closed by :meth:`disconnect`.
        source: The config file name, for error messages.
        devices_key: Where the devices sit in that file (``peripherals[1].devices``).
        wall_clock: Unix seconds stamped on input events.
        shutdown_timeout_s: How long :meth:`disconnect` (and a failed connect) waits for the
            worker thread to finish releasing the pins, seconds.

    Raises:
        BoardNotFound: Unknown board id.
        HardwareError: The board is a microcontroller (it is driven over serial, not gpiozero).
        ConfigInvalid, PinInvalid, PinReserved, PinInUse, PinModeUnsupported: Bad wiring, from
            :func:`~.config.validate_devices`.
    """

    def __init__(
        self,
        hardware: HardwareConfig,
        *,
        board: BoardSpec | None = None,
        name: str = "pi",
        sim: bool | None = None,
        pin_factory: Any = None,
        source: str = "config.toml",
        wall_clock: Callable[[], float] = time.time,
        shutdown_timeout_s: float = 5.0,
        devices_key: str = "devices",
    ) -> None:
        self.board = board or default_registry().get(hardware.board)
        if self.board.family == "mcu":
            raise HardwareError(
                f"board {self.board.id} is a microcontroller: it is driven over USB serial by its "
                "firmware, not through the Pi's GPIO; set [hardware] board to the Pi's id"
            )
        self.name = name
        self.board_type = self.board.id
        self.sim = (self.board.family == "sim") if sim is None else sim
        self.hardware = hardware
        self.wired = validate_devices(self.board, hardware.devices, source, devices_key)
        self._devices: dict[str, GpioDevice] = {w.name: GpioDevice(w) for w in self.wired}
        self._factory = pin_factory
        self._owns_factory = pin_factory is None
        self.shutdown_timeout_s = shutdown_timeout_s
        self._wall_clock = wall_clock
        self._worker: BlockingWorker | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._state = Lifecycle.UNOPENED
        self._hub = EventHub()
        self._hub.add_listener(self._note_input)
        self._blinks = BlinkTasks()
        self._atexit: Callable[[], None] | None = None
        self._tools: list[Tool] | None = None
        #: Every device's state, published where it changes (the dashboard subscribes).
        self.states = StateFeed()

    # --- lifecycle ----------------------------------------------------------------------------

    @property
    def state(self) -> Lifecycle:
        """Where the peripheral is in its life: unopened, open, closing or closed."""
        return self._state

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
            self._factory = make_pin_factory(self.hardware.pin_factory, sim=self.sim)
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
        self._cancel_blinks()
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
        self._require_connected()
        self._cancel_blinks()
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

    async def __aenter__(self) -> PiGpio:
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.disconnect()

    # --- description, tools -------------------------------------------------------------------

    def describe(self) -> str:
        """Lines for the system prompt: the board, each device and the pin aliases."""
        return describe_wiring(self.board, self.devices(), sim=self.sim)

    def tools(self) -> Sequence[Tool]:
        """The GPIO tools for the configured devices (tools with no eligible device are left out)."""
        if self._tools is None:
            self._tools = build_tools([self])
        return self._tools

    def share_tools(self, tools: Sequence[Tool]) -> None:
        """Make :meth:`tools` return ``tools``: a set shared with other peripherals, or none
        (:func:`~clawseed_edge.peripherals.gpio.share_gpio_tools` decides which carries it)."""
        self._tools = list(tools)

    # --- device access ------------------------------------------------------------------------

    def devices(self) -> list[GpioDevice]:
        """The configured devices, in config order."""
        return list(self._devices.values())

    def device(self, name: str) -> GpioDevice:
        """The device called ``name``.

        Raises:
            DeviceNotFound: No such device; the message lists the configured ones.
        """
        try:
            return self._devices[name]
        except KeyError:
            known = ", ".join(self._devices) or "none"
            raise DeviceNotFound(f"no device named {name!r}; configured devices: {known}") from None

    async def switch(self, name: str, on: bool) -> float | None:
        """Switch an output on or off; a ``pwm_led`` goes to its cap when switched on.

        Raises:
            DeviceNotFound, PinModeUnsupported (an input or a servo), HardwareError (not
            connected, pin failure). The switch limit is the SecurityPolicy's to enforce.

        Safe to cancel; a write already handed to the worker still happens.
        """
        dev = self._output(name, "switch")
        if not dev.spec.switch:
            raise PinModeUnsupported(f"{name} is a {dev.kind}: use gpio_set_level with a position")
        value = dev.wired.config.level_range()[1] if on else 0.0
        return await self._write(dev, value)

    async def toggle(self, name: str) -> float | None:
        """Switch an output to the opposite of its last value; see :meth:`switch`."""
        dev = self._output(name, "toggle")
        return await self.switch(name, not dev.value)

    async def set_level(self, name: str, level: float) -> float | None:
        """Set a ``pwm_led`` level (0..cap) or a ``servo`` position (-cap..cap).

        Raises:
            ToolArgumentsInvalid: The level is outside the device's range (the range is named).
            DeviceNotFound, PinModeUnsupported, HardwareError.
        """
        dev = self._output(name, "set a level on")
        if not dev.spec.level:
            raise PinModeUnsupported(
                f"{name} is a {dev.kind}: only pwm_led and servo devices take a level; "
                "use gpio_switch"
            )
        dev.check_level(level)
        return await self._write(dev, float(level))

    async def operate(self, name: str, operation: str, argument: Any) -> float | None:
        """A kind's own operation on ``name``: ``play`` a note, ``set_colour`` to (r, g, b)."""
        dev = self._output(name, operation.replace("_", " "))
        if not getattr(dev.spec, {"play": "tone", "set_colour": "colour"}[operation]):
            raise PinModeUnsupported(f"{name} is a {dev.kind}: it cannot {operation}")
        return await self._run(getattr(dev, operation), argument)

    async def read(self, name: str) -> float | None:
        """The device's current value (1/0 for switches and inputs, the level for PWM)."""
        self._require_connected()
        dev = self.device(name)
        return await self._run(dev.read)

    async def blink(self, name: str, count: int, on_ms: int, off_ms: int) -> None:
        """Start blinking an output ``count`` times in the background, then leave it off.

        Bounds: :data:`~.kinds.BLINK_LIMITS`. A later write to the device stops the blink. Its 2 x
        ``count`` switches are charged by the SecurityPolicy (the tool's DeviceAction says so).

        Raises:
            ToolArgumentsInvalid: An argument is out of its bounds.
            DeviceNotFound, PinModeUnsupported, HardwareError.
        """
        dev = self._output(name, "blink")
        if not dev.spec.blink:
            raise PinModeUnsupported(f"{name} is a {dev.kind}: it cannot blink")
        why = blink_out_of_bounds(count, on_ms, off_ms)
        if why:
            raise ToolArgumentsInvalid(why)
        self._cancel_blink(name)
        on_value = dev.wired.config.level_range()[1]

        async def run() -> None:
            for _ in range(count):
                await self._run(dev.write, on_value)
                await asyncio.sleep(on_ms / 1000)
                await self._run(dev.write, 0.0)
                await asyncio.sleep(off_ms / 1000)

        self._blinks.start(name, run())

    def blinking(self, name: str) -> asyncio.Task[None] | None:
        """The running blink task of ``name``, if any (tests await it)."""
        return self._blinks.get(name)

    def _cancel_blink(self, name: str) -> None:
        self._blinks.cancel(name)

    def _cancel_blinks(self) -> None:
        self._blinks.cancel_all()

    async def status(self) -> list[dict[str, Any]]:
        """Every device's state (see :meth:`pin_states`), read on the worker thread."""
        self._require_connected()
        return await self._run(lambda: [d.state() for d in self._devices.values()])

    def pin_states(self) -> dict[str, dict[str, Any]]:
        """The state of every configured pin, by canonical pin name, read now on this thread.

        Each value: ``pin``, ``device``, ``kind``, ``mode`` (input/output/pwm/closed), ``value``
        (the device's logical value), ``level`` (the physical pin state, 0..1) and ``frequency``.
        Meant for simulation, tests and the CLI; on real pins prefer :meth:`status`.
        """
        return {d.pin_name: d.state() for d in self._devices.values()}

    # --- internals ----------------------------------------------------------------------------

    def _require_connected(self) -> None:
        if self._state is Lifecycle.UNOPENED:
            raise HardwareError(f"peripheral {self.name!r} is not connected yet; connect() first")
        if self._state is not Lifecycle.OPEN:
            raise PeripheralClosed(
                f"peripheral {self.name!r} is {self._state.value}; make a new PiGpio to use it"
            )

    def _output(self, name: str, verb: str) -> GpioDevice:
        self._require_connected()
        dev = self.device(name)
        if not dev.is_output:
            raise PinModeUnsupported(f"{name} is an input ({dev.kind}): cannot {verb} it")
        return dev

    async def _write(self, dev: GpioDevice, value: float | None) -> float | None:
        self._cancel_blink(dev.name)
        return await self._run(dev.write, value)

    async def _run(self, fn: Callable[..., T], *args: Any) -> T:
        if self._worker is None:
            self._require_connected()  # raises: no worker means not open
        assert self._worker is not None
        return await self._worker.run(self._then_publish, fn, *args)

    def _then_publish(self, fn: Callable[..., T], *args: Any) -> T:
        # On the worker: every operation's effect on the devices reaches the state feed.
        try:
            return fn(*args)
        finally:
            self._publish_states()

    def _publish_states(self) -> None:
        for dev in self._devices.values():
            try:
                self.states.publish(DeviceState.from_status(self.name, dev.state()))
            except Exception:  # a state that cannot be read is not published; the op stands
                log.debug("could not publish the state of %s", dev.name, exc_info=True)

    async def refresh(self) -> None:
        """Read every device now; the states arrive through :attr:`states`."""
        await self.status()

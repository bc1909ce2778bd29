"""``WiredBoard``: a board with devices on its pins, whatever reaches the pins.

gpiozero's pin-factory idea one level up: an LED does not know whether its pin is local (lgpio),
mocked, or on a remote board. Here the devices, their checks, the gpio_* tools, blinking, input
events, the safe values and the prompt text are the same for the Pi header
(:class:`~..gpio.PiGpio`, through gpiozero) and a Nucleo (:class:`~..serial.board.SerialBoard`,
through the firmware's JSON lines). A backend says only how a value reaches a pin
(:meth:`WiredBoard._drive`), how a device is read (:meth:`WiredBoard._fetch`), how its devices
are made, and how it connects and disconnects.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, Generic, Self, TypeVar

from clawseed_edge.api import (
    ConfigInvalid,
    DeviceNotFound,
    DeviceState,
    HardwareError,
    Lifecycle,
    PeripheralClosed,
    PinModeUnsupported,
    StateFeed,
    Tool,
    ToolArgumentsInvalid,
)

from ..boards import BoardSpec
from .config import WiredDevice, Wiring, validate_devices
from .device import PinDevice
from .inputs import EventHub, EventStream, InputEvent
from .kinds import blink_out_of_bounds
from .toolset import build_tools

__all__ = ["BlinkTasks", "WiredBoard"]

log = logging.getLogger(__name__)

D = TypeVar("D", bound=PinDevice)

#: The input kinds ``sim press`` / ``sim set-input`` drive (contacts, not measurements).
SIM_INPUT_KINDS = frozenset({"button", "digital_in", "motion_sensor"})


class BlinkTasks:
    """The running blink task of each device: a new blink or any write cancels the old one."""

    def __init__(self) -> None:
        self._tasks: dict[str, asyncio.Task[None]] = {}

    def get(self, name: str) -> asyncio.Task[None] | None:
        return self._tasks.get(name)

    def start(self, name: str, blink: Coroutine[Any, Any, None]) -> None:
        """Run ``blink`` as the device's blink task (the caller cancelled any earlier one)."""
        task = asyncio.get_running_loop().create_task(blink, name=f"blink-{name}")
        self._tasks[name] = task
        task.add_done_callback(lambda t: self._done(name, t))

    def _done(self, name: str, task: asyncio.Task[None]) -> None:
        if self._tasks.get(name) is task:
            del self._tasks[name]
        if not task.cancelled() and task.exception() is not None:
            log.error("blink of %s failed: %s", name, task.exception())

    def cancel(self, name: str) -> None:
        task = self._tasks.pop(name, None)
        if task is not None:
            task.cancel()

    def cancel_all(self) -> None:
        for name in list(self._tasks):
            self.cancel(name)


class WiredBoard(Generic[D]):
    """The devices of one board as a :class:`~..wired.port.GpioPort`, for any backend.

    A subclass validates nothing itself: the wiring is checked here against the board (and by
    the subclass's :meth:`_check_wiring` for what its way of reaching the pins cannot do). It
    implements :meth:`_make_device`, :meth:`_drive`, :meth:`_fetch`, :meth:`_board_line` and the
    lifecycle (connect, disconnect, apply_safe_state, health_check).

    Args:
        board: The board spec.
        wiring: The board id and the devices wired to it.
        name: The peripheral's name.
        source: The config file, for error messages.
        devices_key: Where the devices sit in that file (``peripherals[1].devices``).
        wall_clock: Unix seconds stamped on input events.

    Raises:
        ConfigInvalid, PinInvalid, PinReserved, PinInUse, PinModeUnsupported: Bad wiring.
    """

    def __init__(
        self,
        board: BoardSpec,
        wiring: Wiring,
        *,
        name: str,
        source: str,
        devices_key: str,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.board = board
        self.name = name
        self.board_type = board.id
        self.hardware = wiring
        self.wired = validate_devices(board, wiring.devices, source, devices_key)
        self._check_wiring(self.wired, source)
        self._devices: dict[str, D] = {w.name: self._make_device(w) for w in self.wired}
        self._by_pin: dict[str, D] = {d.pin_name: d for d in self._devices.values()}
        self._state = Lifecycle.UNOPENED
        self._wall_clock = wall_clock
        self._hub = EventHub()
        # The first listener: a device's value is current for every listener after it.
        self._hub.add_listener(self._note_input)
        self._blinks = BlinkTasks()
        self._tools: list[Tool] | None = None
        #: Every device's state, published where it changes (the dashboard, history and
        #: automations subscribe; ``hardware_status`` reads it).
        self.states = StateFeed()

    # --- what a backend provides -----------------------------------------------------------------

    def _check_wiring(self, wired: Sequence[WiredDevice], source: str) -> None:
        """Refuse wiring this backend cannot carry out (the common checks ran already)."""

    def _make_device(self, wired: WiredDevice) -> D:
        raise NotImplementedError

    async def _drive(self, dev: D, value: float | None) -> float | None:
        """Bring ``value`` (checked already) to the device's pin; returns the value it left."""
        raise NotImplementedError

    async def _fetch(self, dev: D) -> float | None:
        """The device's current value, read through the backend."""
        raise NotImplementedError

    async def _sim_level(self, dev: D, level: int) -> None:
        """Put ``level`` on a simulated input's pin (the backend's simulated twin)."""
        raise ConfigInvalid(
            f"{self.name} drives real pins: `sim press` and `sim set-input` work on a simulated "
            "board (run the service with --sim)"
        )

    def _board_line(self) -> str:
        """The first line of :meth:`describe`: the board and how it is reached."""
        raise NotImplementedError

    async def connect(self) -> None:
        raise NotImplementedError

    async def disconnect(self) -> None:
        raise NotImplementedError

    # --- lifecycle ------------------------------------------------------------------------------

    @property
    def state(self) -> Lifecycle:
        """Where the peripheral is in its life: unopened, open, closing or closed."""
        return self._state

    async def __aenter__(self) -> Self:
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.disconnect()

    def _require_open(self) -> None:
        if self._state is Lifecycle.UNOPENED:
            raise HardwareError(f"peripheral {self.name!r} is not connected yet; connect() first")
        if self._state is not Lifecycle.OPEN:
            raise PeripheralClosed(
                f"peripheral {self.name!r} is {self._state.value}; "
                f"make a new {type(self).__name__} to use it"
            )

    # --- description, tools ---------------------------------------------------------------------

    def describe(self) -> str:
        """Lines for the system prompt: the board, each device and the pin aliases."""
        lines = [self._board_line()]
        if not self._devices:
            lines.append("No devices are wired to it.")
            return "\n".join(lines)
        lines.append("Devices (use these names with the gpio_* tools; nothing else is reachable):")
        lines.extend(dev.describe() for dev in self._devices.values())
        if self.board.aliases:
            aliases = ", ".join(f"{k}={v}" for k, v in self.board.aliases.items())
            lines.append(f"Board pin aliases: {aliases}.")
        return "\n".join(lines)

    def tools(self) -> Sequence[Tool]:
        """The gpio_* tools for the devices (or the set shared with other boards); a tool with
        no eligible device is left out."""
        if self._tools is None:
            self._tools = build_tools([self])
        return self._tools

    def share_tools(self, tools: Sequence[Tool]) -> None:
        """Make :meth:`tools` return ``tools``: a set shared with other peripherals, or none
        (:func:`~.toolset.share_gpio_tools` decides which carries it)."""
        self._tools = list(tools)

    # --- device access --------------------------------------------------------------------------

    def devices(self) -> list[D]:
        """The configured devices, in config order."""
        return list(self._devices.values())

    def device(self, name: str) -> D:
        """The device called ``name``.

        Raises:
            DeviceNotFound: No such device; the message lists the configured ones.
        """
        try:
            return self._devices[name]
        except KeyError:
            known = ", ".join(self._devices) or "none"
            raise DeviceNotFound(
                f"no device named {name!r} on {self.name}; configured devices: {known}"
            ) from None

    async def switch(self, name: str, on: bool) -> float | None:
        """Switch an output on or off; a ``pwm_led`` goes to its cap when switched on.

        Raises:
            DeviceNotFound, PinModeUnsupported (an input or a servo), HardwareError (not
            connected, pin failure). The switch limit is the SecurityPolicy's to enforce.

        Safe to cancel; a write already handed to the backend still happens.
        """
        dev = self._output(name, "switch")
        if not dev.spec.switch:
            raise PinModeUnsupported(f"{name} is a {dev.kind}: use gpio_set_level with a position")
        return await self._write(dev, dev.on_value() if on else 0.0)

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

    async def read(self, name: str) -> float | None:
        """The device's current value (1/0 for switches and inputs, the level for PWM)."""
        self._require_open()
        dev = self.device(name)
        value = await self._fetch(dev)
        self._publish(dev)
        return value

    async def sim_input(self, name: str, active: bool) -> float | None:
        """Put a simulated input into its active (a button pressed, a door open, motion) or
        inactive state from outside, through the backend's simulated pin: the edge, the state
        feed and the input rules follow the same path as on hardware. Returns the device's
        value after it (1 active, 0 inactive; None while the edge is still on its way).

        Raises:
            DeviceNotFound: No such device.
            PinModeUnsupported: An output, or an input that is not a contact (a distance sensor).
            ConfigInvalid: The board is not simulated.
        """
        self._require_open()
        dev = self.device(name)
        if dev.is_output or dev.kind not in SIM_INPUT_KINDS:
            raise PinModeUnsupported(
                f"{name} is a {dev.kind}: only inputs ({', '.join(sorted(SIM_INPUT_KINDS))}) are "
                "driven from outside; outputs are switched with the tools"
            )
        # Active-low (a button to ground with a pull-up): active is the low level.
        level = int(active != dev.wired.config.active_low)
        await self._sim_level(dev, level)
        return dev.value

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
        self._blinks.cancel(name)
        on_value = dev.on_value()

        async def run() -> None:
            for _ in range(count):
                await self._drive(dev, on_value)
                self._publish(dev)
                await asyncio.sleep(on_ms / 1000)
                await self._drive(dev, 0.0)
                self._publish(dev)
                await asyncio.sleep(off_ms / 1000)

        self._blinks.start(name, run())

    def blinking(self, name: str) -> asyncio.Task[None] | None:
        """The running blink task of ``name``, if any (tests await it)."""
        return self._blinks.get(name)

    async def status(self) -> list[dict[str, Any]]:
        """Every device's state; inputs are read through the backend first."""
        self._require_open()
        for dev in self._devices.values():
            if not dev.is_output:
                await self._fetch(dev)
        return [dev.state() for dev in self._devices.values()]

    async def refresh(self) -> None:
        """Read the inputs now and publish every device's state (through :attr:`states`)."""
        await self.status()
        self.publish_all()

    def publish_all(self) -> None:
        """Publish every device's state (a repeat of the last one is passed on to no one)."""
        for dev in self._devices.values():
            self._publish(dev)

    def _publish(self, dev: D) -> None:
        try:
            self.states.publish(DeviceState.from_status(self.name, dev.state()))
        except Exception:  # a state that cannot be read is not published; the operation stands
            log.debug("could not publish the state of %s", dev.name, exc_info=True)

    def pin_states(self) -> dict[str, dict[str, Any]]:
        """The state of every configured pin, by canonical pin name, without waiting for the
        backend (the gateway's /metrics reads it; :meth:`status` reads inputs fresh)."""
        return {d.pin_name: d.state() for d in self._devices.values()}

    # --- events ---------------------------------------------------------------------------------

    @property
    def events_dropped(self) -> int:
        """Events dropped because a consumer's queue was full."""
        return self._hub.dropped

    def add_listener(self, callback: Callable[[InputEvent], None]) -> Callable[[], None]:
        """Call ``callback(event)`` on the loop for every input edge; returns a remover."""
        return self._hub.add_listener(callback)

    def events(self) -> EventStream:
        """An async iterator of input events from now on, ending at ``disconnect()``.

        Registered at once (edges between this call and the first ``await`` are kept); see
        :class:`~.inputs.EventStream`.
        """
        return self._hub.stream()

    def _note_input(self, event: InputEvent) -> None:
        dev = self._devices.get(event.device)
        if dev is not None:
            dev.value = float(event.value)
            self._publish(dev)

    # --- internals ------------------------------------------------------------------------------

    def _output(self, name: str, verb: str) -> D:
        self._require_open()
        dev = self.device(name)
        if not dev.is_output:
            raise PinModeUnsupported(f"{name} is an input ({dev.kind}): cannot {verb} it")
        return dev

    async def _write(self, dev: D, value: float | None) -> float | None:
        # Any write stops a running blink of the same device first.
        self._blinks.cancel(dev.name)
        try:
            return await self._drive(dev, value)
        finally:
            self._publish(dev)  # what the device holds now, whether the write went through

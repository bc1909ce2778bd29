"""``SerialBoard``: a Nucleo running this repository's firmware, as a Peripheral.

The devices are configured like Pi GPIO devices (the same kinds, safe values, limits, approval)
and validated against the board file, plus the Nucleo's own rules (one PWM signal per timer
channel, safe values that are pin levels). The board is reached through a
:class:`~.link.BoardLink` (pyserial, a reader thread, reconnection); with ``sim`` a
:class:`~.virtual.VirtualBoard` running the same firmware is started and attached instead.

After every (re)connect the devices are configured on the board again (a replugged board powers
up with nothing configured). While the board is unplugged, every call fails with
``BoardDisconnected`` and :meth:`health_check` reports ``disconnected``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from clawseed_edge.api import (
    BoardCommandFailed,
    DeviceNotFound,
    DeviceState,
    HardwareError,
    HealthStatus,
    Lifecycle,
    PeripheralClosed,
    PinModeUnsupported,
    PinReserved,
    StateFeed,
    Tool,
    ToolArgumentsInvalid,
)

from ..boards import BoardSpec, default_registry
from ..gpio import DeviceConfig, HardwareConfig, build_tools, validate_devices
from ..gpio.devices import BlinkTasks
from ..gpio.inputs import EventHub, EventStream, InputEvent
from ..gpio.kinds import blink_out_of_bounds
from .devices import SerialDevice, check_nucleo_devices
from .link import BoardLink, LinkOptions
from .protocol import BoardEvent

__all__ = ["SerialBoard"]

log = logging.getLogger(__name__)


class SerialBoard:
    """A Nucleo's devices as a :class:`~clawseed_edge.api.Peripheral`.

    Args:
        board: A Nucleo board id or spec.
        devices: The devices wired to it.
        name: The peripheral's name (also in messages).
        port: Device path, ``/dev/serial/by-id`` name or pyserial URL; None: the one Nucleo on
            USB (found again by VID:PID and serial number after an unplug).
        sim: Attach a virtual board running the repository's firmware instead.
        options: Link timing (timeouts, back-off, the board-side watchdog period).
        source: The config file, for error messages.
        devices_key: Where the devices sit in that file (``peripherals[1].devices``).
        wall_clock: Unix seconds stamped on input events.

    Switch limits are the SecurityPolicy's to enforce (the tools' DeviceActions carry them),
    as for Pi GPIO. It is a :class:`~clawseed_edge.peripherals.gpio.GpioPort`: the gpio_*
    tools and ``hardware_status`` reach its devices by name, shared with other boards.

    Raises:
        BoardNotFound: Unknown board id. HardwareError: Not a microcontroller board.
        ConfigInvalid, PinInvalid, PinReserved, PinInUse, PinModeUnsupported: Bad wiring.
    """

    def __init__(
        self,
        board: str | BoardSpec,
        devices: Sequence[DeviceConfig] = (),
        *,
        name: str = "nucleo",
        port: str | None = None,
        sim: bool = False,
        options: LinkOptions | None = None,
        source: str = "config.toml",
        devices_key: str = "devices",
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.board = default_registry().get(board) if isinstance(board, str) else board
        if self.board.family != "mcu":
            raise HardwareError(
                f"board {self.board.id} is not a microcontroller; a serial board is a Nucleo"
            )
        self.name = name
        self.board_type = self.board.id
        self.port = port
        self.sim = sim
        self.options = options or LinkOptions()
        wired = validate_devices(self.board, devices, source, devices_key)
        check_nucleo_devices(self.board, wired, source)
        # The run command turns input edges into messages from hardware.devices, as for a Pi.
        self.hardware = HardwareConfig(board=self.board.id, devices=tuple(devices))
        self._devices = {w.name: SerialDevice(w) for w in wired}
        self._by_pin = {d.pin_name: d for d in self._devices.values()}
        self.state = Lifecycle.UNOPENED
        self.virtual: Any = None
        self.link: BoardLink | None = None
        self._hub = EventHub()
        #: Every device's state, published where it changes (the dashboard subscribes).
        self.states = StateFeed()
        self._wall_clock = wall_clock
        self._blinks = BlinkTasks()
        self._tools: list[Tool] | None = None

    # --- lifecycle ----------------------------------------------------------------------------

    @property
    def connected(self) -> bool:
        return self.link is not None and self.link.connected

    async def connect(self) -> None:
        """Open the link (starting a virtual board with ``sim``), check the firmware, set up
        every device.

        Raises:
            BoardNotFound, BoardProtocolError (stale firmware: run deploy), BoardTimeout,
            BoardCommandFailed (the firmware refused a device's pin), ResourceClosed.

        Safe to cancel: what was opened is closed again.
        """
        if self.state is Lifecycle.OPEN:
            return
        if self.state is not Lifecycle.UNOPENED:
            raise PeripheralClosed(f"peripheral {self.name!r} was disconnected; make a new one")
        port, lister = self.port, None
        if self.sim:
            from .virtual import VirtualBoard

            self.virtual = VirtualBoard(self.board.id).start()
            port, lister = self.virtual.path, self.virtual.lister
        kwargs: dict[str, Any] = {"lister": lister} if lister is not None else {}
        self.link = BoardLink(
            self.board,
            port,
            name=self.name,
            options=self.options,
            on_event=self._on_board_event,
            on_connect=self._setup_devices,
            **kwargs,
        )
        try:
            await self.link.open()
        except BaseException:
            await self._close_link()
            raise
        self.state = Lifecycle.OPEN

    async def _setup_devices(self) -> None:
        assert self.link is not None
        for dev in self._devices.values():
            requests, value = dev.setup()
            for op, args in requests:
                result = await self.link.request(op, args)
            if value is None and not dev.is_output:
                value = dev.value_of_level(int(result["value"]))
            dev.value = value
            self._publish(dev)

    async def disconnect(self) -> None:
        """Apply the safe state, close the link (and a virtual board). Idempotent.

        Safe to cancel: the link and a virtual board are closed anyway.
        """
        if self.state is not Lifecycle.OPEN:
            self.state = Lifecycle.CLOSED
            await self._close_link()
            return
        self.state = Lifecycle.CLOSING
        self._blinks.cancel_all()
        try:
            if self.connected:
                await self._safe()
        except HardwareError as exc:
            log.error("%s: safe state at disconnect failed: %s", self.name, exc)
        finally:
            await self._close_link()
            self._hub.close()
            self.state = Lifecycle.CLOSED

    async def _close_link(self) -> None:
        if self.link is not None:
            await self.link.aclose()
        if self.virtual is not None:
            self.virtual.close()
            self.virtual = None

    async def apply_safe_state(self) -> None:
        """Every output to its safe value (estop, SIGTERM, shutdown), done by the firmware.

        Raises:
            HardwareError: Not connected, or the board did not answer.
        """
        self._require_open()
        self._blinks.cancel_all()
        await self._safe()

    async def _safe(self) -> None:
        assert self.link is not None
        await self.link.request("safe")
        for dev in self._devices.values():
            if dev.is_output:
                dev.value = dev.safe_value()
                self._publish(dev)

    async def health_check(self) -> HealthStatus:
        """Healthy when the link is up and the firmware answers a ping."""
        if self.state is not Lifecycle.OPEN or self.link is None:
            return HealthStatus(False, f"{self.name}: {self.state.value}")
        if not self.link.connected:
            return HealthStatus(False, f"{self.name}: disconnected ({self.link.lost_reason})")
        try:
            await self.link.request("ping")
        except HardwareError as exc:
            return HealthStatus(False, f"{self.name}: {exc}")
        where = "virtual board" if self.sim else (self.link.port or "USB")
        fw = self.link.hello.get("fw")
        return HealthStatus(
            True, f"{len(self._devices)} devices on {self.board.id} ({where}, firmware {fw})"
        )

    async def __aenter__(self) -> SerialBoard:
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.disconnect()

    # --- description, tools -------------------------------------------------------------------

    def describe(self) -> str:
        """Lines for the system prompt: the board and each device, as for a Pi header."""
        where = "a virtual board (simulation)" if self.sim else "USB serial"
        lines = [f"Board {self.name}: {self.board.name} ({self.board.id}) over {where}."]
        if not self._devices:
            lines.append("No devices are wired to it.")
        for dev in self._devices.values():
            cfg = dev.config
            pin = dev.wired.pin
            header = f", header {pin.header}" if pin.header else ""
            parts = [f"- {cfg.name}: {cfg.kind} on {pin.name}{header}"]
            if cfg.description:
                parts.append(cfg.description)
            if dev.spec.level:
                lo, hi = cfg.level_range()
                parts.append(f"level {lo:g}..{hi:g}")
            if cfg.approval:
                parts.append("every change asks the user first")
            if cfg.max_switches_per_minute:
                parts.append(f"at most {cfg.max_switches_per_minute} switches per minute")
            parts.append(f"safe value {cfg.safe}" if dev.is_output else "input (read only)")
            lines.append("; ".join(parts))
        return "\n".join(lines)

    def tools(self) -> Sequence[Tool]:
        """The gpio_* tools for these devices (or the set shared with other boards)."""
        if self._tools is None:
            self._tools = build_tools([self])
        return self._tools

    def share_tools(self, tools: Sequence[Tool]) -> None:
        """Make :meth:`tools` return ``tools`` (a set shared with other peripherals, or none)."""
        self._tools = list(tools)

    # --- device access ------------------------------------------------------------------------

    def devices(self) -> list[SerialDevice]:
        """The configured devices, in config order."""
        return list(self._devices.values())

    def device(self, name: str) -> SerialDevice:
        """The device called ``name``.

        Raises:
            DeviceNotFound: No such device; the message lists the configured ones.
        """
        try:
            return self._devices[name]
        except KeyError:
            known = ", ".join(self._devices) or "none"
            raise DeviceNotFound(
                f"no device named {name!r} on {self.name}; configured: {known}"
            ) from None

    async def switch(self, name: str, on: bool) -> float | None:
        """Switch an output on or off (a ``pwm_led`` goes to its cap).

        Raises:
            DeviceNotFound, PinModeUnsupported, BoardDisconnected, BoardTimeout,
            PinReserved (refused by the firmware), HardwareError.

        Safe to cancel; a request already sent still happens on the board.
        """
        dev = self._output(name, "switch")
        if not dev.spec.switch:
            raise PinModeUnsupported(f"{name} is a {dev.kind}: use gpio_set_level with a position")
        return await self._write(dev, dev.wired.config.level_range()[1] if on else 0.0)

    async def toggle(self, name: str) -> float | None:
        """Switch an output to the opposite of its last value."""
        dev = self._output(name, "toggle")
        return await self.switch(name, not dev.value)

    async def set_level(self, name: str, level: float) -> float | None:
        """A ``pwm_led`` level (0..cap) or a ``servo`` position (-cap..cap)."""
        dev = self._output(name, "set a level on")
        if not dev.spec.level:
            raise PinModeUnsupported(f"{name} is a {dev.kind}: only pwm_led and servo take a level")
        lo, hi = dev.wired.config.level_range()
        if not lo <= level <= hi:
            raise ToolArgumentsInvalid(f"level {level:g} is outside {name}'s range {lo:g}..{hi:g}")
        return await self._write(dev, float(level))

    async def read(self, name: str) -> float | None:
        """The device's value; inputs are read from the board, outputs report the last write."""
        self._require_open()
        dev = self.device(name)
        if dev.is_output:
            return dev.value
        result = await self._request("pin.read", {"pin": dev.pin_name})
        dev.value = dev.value_of_level(int(result["value"]))
        self._publish(dev)
        return dev.value

    async def blink(self, name: str, count: int, on_ms: int, off_ms: int) -> None:
        """Blink an output in the background, ending off; see the Pi GPIO peripheral."""
        dev = self._output(name, "blink")
        if not dev.spec.blink:
            raise PinModeUnsupported(f"{name} is a {dev.kind}: it cannot blink")
        why = blink_out_of_bounds(count, on_ms, off_ms)
        if why:
            raise ToolArgumentsInvalid(why)
        self._blinks.cancel(name)
        on_value = dev.wired.config.level_range()[1]

        async def run() -> None:
            for _ in range(count):
                await self._send_write(dev, on_value)
                await asyncio.sleep(on_ms / 1000)
                await self._send_write(dev, 0.0)
                await asyncio.sleep(off_ms / 1000)

        self._blinks.start(name, run())

    def blinking(self, name: str) -> asyncio.Task[None] | None:
        """The running blink task of ``name``, if any (tests await it)."""
        return self._blinks.get(name)

    async def status(self) -> list[dict[str, Any]]:
        """Every device's state; inputs are read from the board."""
        self._require_open()
        for dev in self._devices.values():
            if not dev.is_output:
                await self.read(dev.name)
        return [dev.state() for dev in self._devices.values()]

    def pin_states(self) -> dict[str, dict[str, Any]]:
        """The last known state of every configured pin, by pin name, without asking the
        board (the gateway's /metrics reads it; :meth:`status` reads inputs fresh)."""
        return {d.pin_name: d.state() for d in self._devices.values()}

    # --- events -------------------------------------------------------------------------------

    def add_listener(self, callback: Callable[[InputEvent], None]) -> Callable[[], None]:
        """Call ``callback(event)`` on the loop for every input edge; returns a remover."""
        return self._hub.add_listener(callback)

    def events(self) -> EventStream:
        """An async iterator of input events from now on, ending at :meth:`disconnect`."""
        return self._hub.stream()

    def _on_board_event(self, event: BoardEvent) -> None:
        if event.name == "edge":
            dev = self._by_pin.get(str(event.data.get("pin")))
            if dev is None or dev.is_output:
                return
            value = dev.value_of_level(int(event.data.get("value", 0)))
            if value == dev.value:
                return  # the level came back before we saw it leave
            dev.value = value
            self._publish(dev)
            self._hub.emit(InputEvent(dev.name, int(value), self._wall_clock(), dev.pin_name))
        elif event.name == "watchdog":
            log.warning("%s: the board's watchdog set the outputs safe: %s", self.name, event.data)
            for dev in self._devices.values():
                if dev.is_output:
                    dev.value = dev.safe_value()
                    self._publish(dev)

    # --- internals ----------------------------------------------------------------------------

    def _require_open(self) -> None:
        if self.state is Lifecycle.UNOPENED:
            raise HardwareError(f"peripheral {self.name!r} is not connected yet; connect() first")
        if self.state is not Lifecycle.OPEN:
            raise PeripheralClosed(f"peripheral {self.name!r} is {self.state.value}")

    def _output(self, name: str, verb: str) -> SerialDevice:
        self._require_open()
        dev = self.device(name)
        if not dev.is_output:
            raise PinModeUnsupported(f"{name} is an input ({dev.kind}): cannot {verb} it")
        return dev

    async def _write(self, dev: SerialDevice, value: float | None) -> float | None:
        self._blinks.cancel(dev.name)
        return await self._send_write(dev, value)

    async def _send_write(self, dev: SerialDevice, value: float | None) -> float | None:
        op, args = dev.write_request(value)
        await self._request(op, args)
        dev.value = value
        self._publish(dev)
        return value

    def _publish(self, dev: SerialDevice) -> None:
        self.states.publish(DeviceState.from_status(self.name, dev.state()))

    async def refresh(self) -> None:
        """Read the inputs now; every state arrives through :attr:`states`."""
        await self.status()

    async def _request(self, op: str, args: dict[str, Any]) -> Any:
        if self.link is None:
            raise HardwareError(f"peripheral {self.name!r} is not connected")
        try:
            return await self.link.request(op, args)
        except BoardCommandFailed as exc:
            if exc.board_code == "pin_reserved":
                raise PinReserved(str(exc)) from exc
            raise

"""``SerialBoard``: a Nucleo running this repository's firmware, as a Peripheral.

The Nucleo's backend of the shared wired-device model (:class:`~..wired.WiredBoard`): the
devices, their checks, tools, blinking and events are those of a Pi header; what differs is how a
value reaches a pin (a request to the firmware). The wiring is validated against the board file,
plus the Nucleo's own rules (one PWM signal per timer channel, safe values that are pin levels).
The board is reached through a
:class:`~.link.BoardLink` (pyserial, a reader thread, reconnection); with ``sim`` a
:class:`~.virtual.VirtualBoard` running the same firmware is started and attached instead.

After every (re)connect the devices are configured on the board again (a replugged board powers
up with nothing configured). While the board is unplugged, every call fails with
``BoardDisconnected`` and :meth:`health_check` reports ``disconnected``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from clawseed_edge.api import (
    BoardCommandFailed,
    EstopLatch,
    HardwareError,
    HealthStatus,
    Lifecycle,
    PeripheralClosed,
    PinReserved,
)

from ..boards import BoardSpec, default_registry
from ..wired import DeviceConfig, InputEvent, WiredBoard, WiredDevice, Wiring
from .devices import SerialDevice, check_nucleo_devices
from .link import BoardLink, LinkOptions
from .protocol import BoardEvent

__all__ = ["SerialBoard"]

log = logging.getLogger(__name__)


class SerialBoard(WiredBoard[SerialDevice]):
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
    as for Pi GPIO. It is a :class:`~clawseed_edge.peripherals.wired.GpioPort`: the gpio_*
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
        spec = default_registry().get(board) if isinstance(board, str) else board
        if spec.family != "mcu":
            raise HardwareError(
                f"board {spec.id} is not a microcontroller; a serial board is a Nucleo"
            )
        self.port = port
        self.sim = sim
        self.options = options or LinkOptions()
        # The run command turns input edges into messages from hardware.devices, as for a Pi.
        super().__init__(
            spec,
            Wiring(board=spec.id, devices=tuple(devices)),
            name=name,
            source=source,
            devices_key=devices_key,
            wall_clock=wall_clock,
        )
        self.virtual: Any = None
        self.link: BoardLink | None = None
        self._at_safe = False
        #: The service's emergency-stop latch: while it holds, a board that reset or was
        #: replugged sets its outputs up at their safe level, never at ``initial``.
        self.estop_latch: EstopLatch | None = None

    def _check_wiring(self, wired: Sequence[WiredDevice], source: str) -> None:
        check_nucleo_devices(self.board, wired, source)

    def _make_device(self, wired: WiredDevice) -> SerialDevice:
        return SerialDevice(wired)

    # --- lifecycle ----------------------------------------------------------------------------

    @property
    def connected(self) -> bool:
        return self.link is not None and self.link.connected

    async def connect(self, *, at_safe: bool = False) -> None:
        """Open the link (starting a virtual board with ``sim``), check the firmware, set up
        every device (with ``at_safe``, as for an estop, every output at its safe value: never
        at ``initial``).

        Raises:
            BoardNotFound, BoardProtocolError (stale firmware: run deploy), BoardTimeout,
            BoardCommandFailed (the firmware refused a device's pin), ResourceClosed.

        Safe to cancel: what was opened is closed again.
        """
        if self._state is Lifecycle.OPEN:
            return
        if self._state is not Lifecycle.UNOPENED:
            raise PeripheralClosed(f"peripheral {self.name!r} was disconnected; make a new one")
        self._at_safe = at_safe
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
        self._state = Lifecycle.OPEN

    async def _setup_devices(self) -> None:
        assert self.link is not None
        # Safe, never initial: while the emergency stop is latched, and when back from the REPL
        # (the firmware stopped with its outputs safe).
        latched = self.estop_latch is not None and self.estop_latch.latched
        at_safe = self._at_safe or latched or self.link.restarted_from_repl
        for dev in self._devices.values():
            requests, value = dev.setup(at_safe=at_safe)
            for op, args in requests:
                result = await self.link.request(op, args)
                dev.record(op, args, result)
            if value is None and not dev.is_output:
                value = dev.value_of_level(int(result["value"]))
            dev.value = value
            self._publish(dev)

    async def disconnect(self) -> None:
        """Apply the safe state, close the link (and a virtual board). Idempotent.

        Safe to cancel: the link and a virtual board are closed anyway.
        """
        if self._state is not Lifecycle.OPEN:
            self._state = Lifecycle.CLOSED
            await self._close_link()
            return
        self._state = Lifecycle.CLOSING
        self._blinks.cancel_all()
        try:
            if self.connected:
                await self._safe()
        except HardwareError as exc:
            log.error("%s: safe state at disconnect failed: %s", self.name, exc)
        finally:
            await self._close_link()
            self._hub.close()
            self._state = Lifecycle.CLOSED

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
                dev.record("safe", {})
                self._publish(dev)

    async def health_check(self) -> HealthStatus:
        """Healthy when the link is up and the firmware answers a ping."""
        if self._state is not Lifecycle.OPEN or self.link is None:
            return HealthStatus(False, f"{self.name}: {self.state.value}")
        if not self.link.connected:
            return HealthStatus(False, f"{self.name}: disconnected ({self.link.lost_reason})")
        try:
            await self.link.request("ping")
        except HardwareError as exc:
            return HealthStatus(False, f"{self.name}: {exc}")
        where = "virtual board" if self.sim else (self.link.port or "USB")
        fw = self.link.hello.get("fw")
        back = self.repl_recoveries
        again = (
            f"; brought back from the REPL {back} time{'' if back == 1 else 's'}" if back else ""
        )
        return HealthStatus(
            True,
            f"{len(self._devices)} devices on {self.board.id} ({where}, firmware {fw}){again}",
        )

    @property
    def repl_recoveries(self) -> int:
        """Times the board was found at the MicroPython REPL and its firmware restarted."""
        return self.link.repl_recoveries if self.link is not None else 0

    # --- the Nucleo's side of the shared model ----------------------------------------------------

    def _board_line(self) -> str:
        where = "a virtual board (simulation)" if self.sim else "USB serial"
        return f"Board {self.name}: {self.board.name} ({self.board.id}) over {where}."

    async def _fetch(self, dev: SerialDevice) -> float | None:
        # Inputs are read from the board; an output reports its last write.
        if dev.is_output:
            return dev.value
        result = await self._request("pin.read", {"pin": dev.pin_name})
        dev.record("pin.read", {}, result)
        dev.value = dev.value_of_level(int(result["value"]))
        self._publish(dev)
        return dev.value

    # --- events -------------------------------------------------------------------------------

    async def _sim_level(self, dev: SerialDevice, level: int) -> None:
        # The virtual board's input line: the firmware sees the edge on its next round and
        # sends it as an event, as from a real pin.
        if self.virtual is None:
            await super()._sim_level(dev, level)
            return
        self.virtual.state.drive_input(dev.pin_name, level)

    def _on_board_event(self, event: BoardEvent) -> None:
        if event.name == "edge":
            dev = self._by_pin.get(str(event.data.get("pin")))
            if dev is None or dev.is_output:
                return
            dev.record("edge", {}, event.data)
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
                    dev.record("safe", {})
                    self._publish(dev)

    # --- internals ----------------------------------------------------------------------------

    async def _drive(self, dev: SerialDevice, value: float | None) -> float | None:
        op, args = dev.write_request(value)
        await self._request(op, args)
        dev.record(op, args)
        dev.value = value
        self._publish(dev)
        return value

    async def _request(self, op: str, args: dict[str, Any]) -> Any:
        if self.link is None:
            raise HardwareError(f"peripheral {self.name!r} is not connected")
        try:
            return await self.link.request(op, args)
        except BoardCommandFailed as exc:
            if exc.board_code == "pin_reserved":
                raise PinReserved(str(exc)) from exc
            raise

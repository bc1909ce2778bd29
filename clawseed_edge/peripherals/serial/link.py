"""The host's connection to a board's firmware: requests and replies over pyserial, on asyncio.

:class:`BoardLink` owns one serial port and two
:class:`~clawseed_edge.peripherals.worker.BlockingWorker` threads: the reader runs one blocking
read loop per connection (it ends when the port closes), the writer opens, writes and closes
the port in FIFO order, so the event loop never waits on the port. Replies
are matched to requests by id (:mod:`.protocol`); unsolicited events go to ``on_event``.

Connecting checks the firmware with ``hello``: protocol, firmware version and pin-table hash
must be the repository's, otherwise the error says to run ``clawseed-edge deploy``. A board
found at the REPL prompt is soft-reset once (its ``main.py`` starts the firmware).

When the cable is unplugged the link reports ``disconnected``: pending and new requests fail
at once with :class:`~clawseed_edge.api.BoardDisconnected`, and a background task looks for
the board again -- the configured path, or the port with the same USB VID:PID and serial
number -- with exponential back-off, then repeats the handshake and calls ``on_connect`` (the
peripheral re-applies its pin modes there). A board that resets while its port stays open (the
reset button, its hardware watchdog) is noticed by the heartbeat -- its ping carries a session
number the board forgets at a reset -- and set up the same way. A board whose firmware loop
gave up and left it at the MicroPython REPL (its traceback, then a ``>>>`` prompt) is noticed
by that prompt -- a heartbeat that gets no answer presses Enter to make a REPL show it --,
logged, soft-reset and set up again at safe levels; :attr:`BoardLink.repl_recoveries` counts it.

Bounds: every request has a timeout (``request_timeout_s``); the handshake has its own; the
back-off is capped; the protocol bounds line length.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from clawseed_edge.api import (
    BoardCommandFailed,
    BoardDisconnected,
    BoardProtocolError,
    HardwareError,
    Lifecycle,
    ResourceClosed,
)

from ..boards import BoardSpec
from ..worker import BlockingWorker
from .link_setup import LinkOptions, Opener, check_hello, find_board_port, open_serial
from .ports import PortLister, find_ports, list_usb_ports
from .protocol import (
    MAX_ID,
    BoardEvent,
    Item,
    Malformed,
    Noise,
    ReplPrompt,
    Reply,
    SerialProtocol,
)

__all__ = ["BoardLink", "BoardTimeout", "LinkOptions", "Opener"]

log = logging.getLogger(__name__)


class BoardTimeout(HardwareError, TimeoutError):
    """The board did not answer a request within its timeout."""

    code = "board_timeout"


class BoardLink:
    """One board's firmware behind one serial port.

    Args:
        board: The board spec (its id, USB ids and pin table).
        port: Device path, ``/dev/serial/by-id`` name or pyserial URL; None: the one Nucleo on
            USB.
        name: For messages (the peripheral's name).
        options: Timeouts and back-off.
        on_event: Called on the loop for each unsolicited board event.
        on_connect: Awaited after every successful handshake (first connect and reconnects).
        opener: Opens a port (tests pass their own); pyserial by default.
        lister: Lists USB serial ports, to find the board again after an unplug.
    """

    def __init__(
        self,
        board: BoardSpec,
        port: str | None = None,
        *,
        name: str = "nucleo",
        options: LinkOptions | None = None,
        on_event: Callable[[BoardEvent], None] | None = None,
        on_connect: Callable[[], Awaitable[None]] | None = None,
        opener: Opener = open_serial,
        lister: PortLister = list_usb_ports,
    ) -> None:
        self.board = board
        self.port = port
        self.name = name
        self.options = options or LinkOptions()
        self.on_event = on_event
        self.on_connect = on_connect
        self._opener = opener
        self._lister = lister
        self.state = Lifecycle.UNOPENED
        self.connected = False
        self.hello: dict[str, Any] = {}
        self.serial_number: str | None = None
        self.noise: list[str] = []  # the last non-protocol lines, for diagnostics
        self._proto = SerialProtocol()
        self._pending: dict[int, asyncio.Future[Reply]] = {}
        self._link: Any = None
        self._reader: BlockingWorker | None = None
        self._read_job: asyncio.Future[None] | None = None
        self._writer: BlockingWorker | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._repl_seen: asyncio.Event | None = None
        self._lost_reason = ""
        self._session = 0  # told to the board at every set-up; a board that forgot it reset
        self._handshaking = False
        self._resetting = False  # from a REPL prompt until the firmware answers hello again
        #: Times the board was found at the REPL mid-session and brought back.
        self.repl_recoveries = 0
        #: True while the firmware is being restarted from the REPL (until it is set up again:
        #: the peripheral sets its outputs up at their safe levels then).
        self.restarted_from_repl = False

    # --- lifecycle ----------------------------------------------------------------------------

    async def open(self) -> None:
        """Open the port and check the firmware.

        Raises:
            BoardNotFound: No such port / no Nucleo on USB.
            BoardProtocolError: No firmware answers, or it is stale (run deploy), or it is
                another board's.
            ResourceClosed: The link was closed.

        Safe to cancel: a half-open port is closed again.
        """
        if self.state is Lifecycle.OPEN:
            return
        if self.state is not Lifecycle.UNOPENED:
            raise ResourceClosed(f"the link to {self.name} was closed; make a new one")
        self._loop = asyncio.get_running_loop()
        self._writer = BlockingWorker(f"serial-w-{self.name}")
        self._reader = BlockingWorker(f"serial-r-{self.name}")
        # Open for requests from here on: on_connect (the device setup) runs inside _connect.
        self.state = Lifecycle.OPEN
        try:
            await self._connect(
                self.port or find_board_port(self.board, self.serial_number, self._lister)
            )
        except BaseException:
            self.state = Lifecycle.UNOPENED
            self.connected = False
            await self._close_workers()
            raise
        self._spawn(self._heartbeat())

    async def aclose(self) -> None:
        """Stop reconnecting, fail pending requests, close the port. Idempotent."""
        if self.state in (Lifecycle.CLOSING, Lifecycle.CLOSED):
            return
        self.state = Lifecycle.CLOSING
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(BaseException):
                await task
        self._fail_pending(ResourceClosed(f"the link to {self.name} was closed"))
        self.connected = False
        await self._close_workers()
        self.state = Lifecycle.CLOSED

    async def _close_workers(self) -> None:
        # Closing the port ends the reader's blocking read; then both workers finish.
        self._drop_port()
        for worker in (self._writer, self._reader):
            if worker is not None:
                await worker.aclose()
        if self._read_job is not None:
            with contextlib.suppress(BaseException):
                await self._read_job
            self._read_job = None
        self._writer = self._reader = None

    @property
    def lost_reason(self) -> str:
        """Why the link is disconnected (empty while connected)."""
        return "" if self.connected else self._lost_reason

    # --- requests -----------------------------------------------------------------------------

    async def request(
        self, op: str, args: dict[str, Any] | None = None, *, timeout_s: float | None = None
    ) -> Any:
        """Send one request and return its result.

        Raises:
            BoardDisconnected: The board is unplugged (the link is reconnecting).
            BoardTimeout: No reply within the timeout (seconds).
            BoardCommandFailed: The firmware refused; ``board_code`` is its error code
                (``pin_reserved``, ``bad_args`` ...).
            ResourceClosed: The link was closed.

        Safe to cancel: the reply, if it comes, is dropped.
        """
        if self.state is not Lifecycle.OPEN:
            raise ResourceClosed(f"the link to {self.name} is {self.state.value}")
        if self._resetting:
            raise BoardDisconnected(
                f"{self.name} is restarting its firmware (it was at the MicroPython REPL); "
                "try again in a few seconds"
            )
        return await self._request(op, args, timeout_s)

    async def _request(self, op: str, args: dict[str, Any] | None, timeout_s: float | None) -> Any:
        if not self.connected:
            raise BoardDisconnected(
                f"{self.name} ({self.board.id}) is disconnected: {self._lost_reason}; "
                "reconnecting in the background"
            )
        loop = asyncio.get_running_loop()
        rid, line = self._proto.encode(op, args)
        future: asyncio.Future[Reply] = loop.create_future()
        self._pending[rid] = future
        timeout = self.options.request_timeout_s if timeout_s is None else timeout_s
        try:
            await self._write(line)
            async with asyncio.timeout(timeout):
                reply = await future
        except TimeoutError:
            raise BoardTimeout(
                f"{self.name} did not answer {op} within {timeout:g} s; the board may be busy "
                "or hung (press its reset button if it keeps happening)"
            ) from None
        finally:
            self._pending.pop(rid, None)
        if not reply.ok:
            raise BoardCommandFailed(f"{self.name}: {reply.message}", board_code=reply.code)
        return reply.result

    async def _write(self, data: bytes) -> None:
        link, writer = self._link, self._writer
        if link is None or writer is None:
            raise BoardDisconnected(f"{self.name} is disconnected")
        try:
            await writer.run(link.write, data)
        except Exception as exc:  # pyserial's SerialException or OSError: the cable went away
            self._lost(f"write failed: {exc}")
            raise BoardDisconnected(f"{self.name} went away while writing: {exc}") from exc

    # --- connecting ---------------------------------------------------------------------------

    async def _connect(self, port: str) -> None:
        assert self._writer is not None and self._reader is not None
        self._link = await self._writer.run(self._opener, port)
        self._proto.reset()
        self._repl_seen = asyncio.Event()
        # The reader worker runs jobs in order: this read loop starts after the previous
        # connection's loop has ended (its port was closed).
        self._read_job = asyncio.ensure_future(self._reader.run(self._read_forever, self._link))
        self.connected = True
        if self.serial_number is None:
            for found in find_ports([self.board], lister=self._lister):
                if found.device == port:
                    self.serial_number = found.serial_number
        self.hello = await self._handshake(port)
        await self._set_up()

    async def _set_up(self) -> None:
        # What a board loses when it resets: the session number, the watchdogs, the devices.
        self._session = self._session % MAX_ID + 1
        await self._request("ping", {"session": self._session}, None)
        watchdogs: dict[str, Any] = {"period_ms": self.options.watchdog_ms}
        if self.options.hardware_watchdog_ms:
            watchdogs["hardware_ms"] = self.options.hardware_watchdog_ms
        if self.options.watchdog_ms or self.options.hardware_watchdog_ms:
            await self._request("watchdog", watchdogs, None)
        if self.on_connect is not None:
            await self.on_connect()

    async def _handshake(self, port: str) -> dict[str, Any]:
        self._handshaking = True
        try:
            return await self._hello(port)
        finally:
            self._handshaking = False

    async def _hello(self, port: str) -> dict[str, Any]:
        hello: dict[str, Any] | None = None
        deadline = asyncio.get_running_loop().time() + self.options.hello_timeout_s
        reset_sent = False
        while hello is None:
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                raise BoardProtocolError(
                    f"no firmware answers on {port} ({self.board.id}); flash MicroPython "
                    f"(`clawseed-edge flash {self.board.id}`) and run `clawseed-edge deploy "
                    f"--board {self.board.id} --port {port}`"
                    + (f"; the board said: {self.noise[-1]!r}" if self.noise else "")
                )
            try:
                hello = await self._request("hello", None, min(left, 1.0))
            except BoardTimeout:
                assert self._repl_seen is not None
                if self._repl_seen.is_set() and not reset_sent:
                    # At the REPL: a soft reset runs main.py, which starts the firmware.
                    await self._write(b"\r\x03\x04")
                    reset_sent = True
                else:
                    # A REPL waits for Enter before it shows a prompt (the firmware ignores an
                    # empty line), so the next round can tell the two apart.
                    await self._write(b"\r")
        check_hello(self.name, self.board, hello)
        return hello

    # --- the reader thread and what it hands to the loop --------------------------------------

    def _read_forever(self, link: Any) -> None:
        assert self._loop is not None
        loop = self._loop
        while True:
            try:
                data = link.read(link.in_waiting or 1)
            except Exception as exc:  # SerialException/OSError: unplugged, or closed by us
                with contextlib.suppress(RuntimeError):
                    loop.call_soon_threadsafe(self._lost_from_reader, link, str(exc))
                return
            if data:
                with contextlib.suppress(RuntimeError):  # the loop is closing
                    loop.call_soon_threadsafe(self._received, link, data)

    def _received(self, link: Any, data: bytes) -> None:
        if link is not self._link:
            return  # bytes from a port we already gave up
        for item in self._proto.feed(data):
            self._dispatch(item)

    def _dispatch(self, item: Item) -> None:
        if isinstance(item, Reply):
            if item.code == "bad_reply":
                log.warning("%s: %s", self.name, item.message)
            future = self._pending.get(item.id) if item.id is not None else None
            if future is not None and not future.done():
                future.set_result(item)
            elif item.id is None:
                log.warning("%s could not read a request: %s", self.name, item.message)
        elif isinstance(item, BoardEvent):
            if self.on_event is not None:
                try:
                    self.on_event(item)
                except Exception:
                    # The rest of the chunk (a reply someone awaits) must still be delivered.
                    log.exception("%s: handling board event %r failed", self.name, item)
        elif isinstance(item, Malformed):
            log.warning("%s: dropped a malformed line (%s): %s", self.name, item.reason, item.text)
            self.noise = [*self.noise[-9:], item.text]
        elif isinstance(item, ReplPrompt):
            if self._repl_seen is not None:
                self._repl_seen.set()
            self.noise = [*self.noise[-9:], item.prompt]
            if (
                self.connected
                and not self._handshaking
                and not self.restarted_from_repl
                and self.state is Lifecycle.OPEN
            ):
                # Mid-session: the firmware stopped and nothing will answer until it runs again.
                self.restarted_from_repl = True
                self._spawn(self._restart_from_repl())
        elif isinstance(item, Noise):
            self.noise = [*self.noise[-9:], item.text]

    def _lost_from_reader(self, link: Any, reason: str) -> None:
        if link is self._link and self.state is not Lifecycle.CLOSING:
            self._lost(reason)

    def _lost(self, reason: str) -> None:
        if not self.connected:
            return
        self.connected = False
        self._lost_reason = reason
        log.warning("%s disconnected: %s", self.name, reason)
        self._fail_pending(BoardDisconnected(f"{self.name} disconnected: {reason}"))
        self._drop_port()
        if self.state is Lifecycle.OPEN:
            self._spawn(self._reconnect())

    def _fail_pending(self, exc: Exception) -> None:
        for future in self._pending.values():
            if not future.done():
                future.set_exception(exc)
        self._pending.clear()

    def _drop_port(self) -> None:
        link, self._link = self._link, None
        if link is not None:
            with contextlib.suppress(Exception):
                # On the calling thread, not the writer: a write stuck on a dead port must not
                # keep the port open. The reader's blocked read then ends with an error.
                link.close()

    async def _reconnect(self) -> None:
        delay, longest = self.options.backoff_s
        while self.state is Lifecycle.OPEN and not self.connected:
            await asyncio.sleep(delay)
            try:
                port = self.port if self.port and self.serial_number is None else None
                await self._connect(
                    port or find_board_port(self.board, self.serial_number, self._lister)
                )
                log.warning("%s reconnected", self.name)
                return
            except (HardwareError, OSError) as exc:
                self.connected = False
                self._lost_reason = f"reconnecting: {exc}"
                self._drop_port()
            delay = min(delay * 2, longest)

    async def _restart_from_repl(self) -> None:
        """Soft-reset a board found at the REPL (main.py starts the firmware), check it, set
        it up again; a board that does not come back is handled as lost (reconnecting)."""
        self.repl_recoveries += 1
        said = next((n for n in reversed(self.noise) if "Error" in n or "Exception" in n), "")
        log.warning(
            "%s is at the MicroPython REPL: its firmware stopped%s; soft-resetting it and "
            "setting it up again at safe levels (%d time%s this session)",
            self.name,
            f" ({said})" if said else "",
            self.repl_recoveries,
            "" if self.repl_recoveries == 1 else "s",
        )
        self._fail_pending(
            BoardDisconnected(f"{self.name} was at the MicroPython REPL; restarting its firmware")
        )
        try:
            self._resetting = True
            self._repl_seen = asyncio.Event()
            await self._write(b"\r\x03\x04")  # Ctrl-C, then Ctrl-D: a soft reset runs main.py
            self.hello = await self._handshake(self.port or "USB")
            self._resetting = False
            await self._set_up()
            log.warning("%s: the firmware runs again", self.name)
        except HardwareError as exc:
            self._lost(f"the firmware did not come back from the REPL: {exc}")
        finally:
            self._resetting = self.restarted_from_repl = False

    async def _heartbeat(self) -> None:
        # Keeps the board-side watchdog fed while the host is alive and connected, and sees a
        # board that reset behind a port that stayed open (its reset button, its hardware
        # watchdog): the session number is gone, so the board is set up again.
        period = self.options.watchdog_ms / 3000 if self.options.watchdog_ms else None
        while period is not None:
            await asyncio.sleep(period)
            if not self.connected or self.restarted_from_repl:
                continue
            try:
                pong = await self._request("ping", {"session": self._session}, None)
            except BoardTimeout:
                # A REPL answers nothing and shows its prompt only after Enter; the prompt
                # then restarts the firmware (_dispatch).
                with contextlib.suppress(HardwareError):
                    await self._write(b"\r")
                continue
            except HardwareError:
                continue
            with contextlib.suppress(HardwareError):
                if isinstance(pong, dict) and pong.get("session") != self._session:
                    log.warning(
                        "%s was reset (its devices start over); setting it up again", self.name
                    )
                    await self._set_up()

    def _spawn(self, coro: Awaitable[None]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

"""The virtual board: the real ``firmware/`` code on CPython behind a pseudo-terminal.

:class:`VirtualBoard` loads the firmware's modules (:data:`FIRMWARE_MODULES`) and a board's
generated pin table from ``firmware/``, gives the hardware layer a simulated ``machine`` module
(and ``pyb``; :mod:`.sim_machine`), and runs the firmware's own UART loop on a
thread against the master side of a pty. Anything that opens the slave path (``/dev/pts/N``) --
the host driver through pyserial, deploy, a terminal -- talks to the same code a Nucleo runs.

``baud`` emulates the wire: the board waits the time the bytes it received and sends would need
at that rate (10 bits per byte, 8N1), so a round trip costs what it costs on a real cable.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import select
import sys
import tempfile
import threading
import time
import tty
from pathlib import Path
from types import ModuleType
from typing import Any

from clawseed_edge.api import HardwareError

from ..boards import default_registry
from .pintable import FIRMWARE_DIR, table_path
from .ports import FoundPort
from .sim_machine import SimBoardState, make_machine, make_pyb
from .virtual_repl import VirtualRepl

__all__ = ["FIRMWARE_MODULES", "VirtualBoard", "load_firmware"]

FIRMWARE_MODULES = ("clawseed_timers", "clawseed_core", "clawseed_hw", "clawseed_loop")
"""The firmware modules, in import order (the loop imports the core by name)."""

_load_lock = threading.Lock()


def load_firmware(
    board_id: str, firmware_dir: Path = FIRMWARE_DIR
) -> tuple[dict[str, ModuleType], ModuleType]:
    """Import the firmware modules and ``board_id``'s pin table from ``firmware_dir``.

    The firmware imports its own modules by their plain names, so they are registered in
    ``sys.modules`` under those names (they hold no state of their own; every board's state
    lives in its ``Core``). The pin table is loaded under a per-board name.

    Raises:
        HardwareError: The directory or the board's pin table is missing (names the path and
            says how to regenerate it).
    """
    table_file = table_path(board_id, firmware_dir)
    if not table_file.is_file():
        raise HardwareError(
            f"no firmware pin table for {board_id} at {table_file}; regenerate the tables with "
            "`python -m clawseed_edge.peripherals.serial.pintable` (in a checkout of the repo)"
        )
    modules: dict[str, ModuleType] = {}
    with _load_lock:
        for name in FIRMWARE_MODULES:
            loaded = sys.modules.get(name)
            if (
                loaded is None
                or Path(getattr(loaded, "__file__", "")) != firmware_dir / f"{name}.py"
            ):
                loaded = _import_path(name, firmware_dir / f"{name}.py")
                sys.modules[name] = loaded
            modules[name] = loaded
        table = _import_path(f"clawseed_pins_{board_id.replace('-', '_')}", table_file)
    return modules, table


def _import_path(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise HardwareError(f"cannot load firmware module {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


class _PtyStream:
    """The firmware loop's rx/tx over the pty master: poll()able, never blocking on read.

    A Ctrl-C byte raises KeyboardInterrupt out of :meth:`read`, as MicroPython raises it out of
    the UART read on a board; the bytes after it wait in :attr:`pending` for the REPL.
    """

    def __init__(self, fd: int, baud: int | None) -> None:
        self.fd = fd
        self.byte_s = 10 / baud if baud else 0.0
        self.pending = b""
        self.interrupts = True
        self._wire_free = 0.0  # when the emulated wire is idle again (monotonic seconds)

    def _pace(self, nbytes: int) -> None:
        # Keep a running account of the wire's busy time and sleep only when it is ahead by a
        # millisecond or more: one sleep per byte would add the OS's sleep overhead each time.
        if not self.byte_s:
            return
        now = time.monotonic()
        self._wire_free = max(self._wire_free, now) + nbytes * self.byte_s
        if self._wire_free - now >= 0.001:
            time.sleep(self._wire_free - now)

    def fileno(self) -> int:
        return self.fd

    def read(self, n: int) -> bytes:
        try:
            data = os.read(self.fd, n)
        except OSError:  # EIO: nobody has the slave open; nothing to read
            time.sleep(0.01)
            return b""
        self._pace(len(data))
        if self.interrupts and b"\x03" in data:
            self.pending = data[data.index(b"\x03") + 1 :]
            raise KeyboardInterrupt
        return data

    def write(self, data: bytes) -> None:
        self._pace(len(data))
        view = memoryview(data)
        while view:
            try:
                sent = os.write(self.fd, view)
            except BlockingIOError:
                time.sleep(0.001)
                continue
            except OSError:
                return  # the host side went away; the bytes are lost, as on a cable
            view = view[sent:]

    def flush(self) -> None:
        pass


class VirtualBoard:
    """A Nucleo running the real firmware on CPython, reachable at :attr:`path`.

    Args:
        board_id: A Nucleo board id (its pin table must exist in ``firmware/pins``).
        firmware_dir: Where the firmware lives (the packaged copy, also the repo's ``firmware/``).
        baud: Emulated line rate in bits per second (None: as fast as the pty goes).
        state: The simulated pins (a fresh :class:`SimBoardState` by default).
        fs_dir: The board's filesystem, where deploy writes (a temporary directory, removed
            at :meth:`close`, by default). The virtual board always runs the repository's
            firmware source: it cannot load the ``.mpy`` files deploy puts there.
        machine_pwm: Offer ``machine.PWM`` (stm32 MicroPython from v1.28 on); by default the
            firmware takes the ``pyb.Timer`` path, as on the v1.27 images boards run.

    Ctrl-C stops the firmware loop (outputs go safe) and leaves the board at an emulated REPL
    (:mod:`.virtual_repl`) until a soft reset (Ctrl-D) starts the firmware again. A hard reset
    (``machine.reset()`` at the REPL, or the firmware's hardware watchdog running out while
    nothing feeds it, as at the REPL) resets the pins too and stops the watchdog
    (:attr:`hard_resets` counts them).

    Use as a context manager, or :meth:`start` / :meth:`close` (idempotent).
    """

    def __init__(
        self,
        board_id: str = "nucleo-f401re",
        *,
        firmware_dir: Path = FIRMWARE_DIR,
        baud: int | None = None,
        state: SimBoardState | None = None,
        fs_dir: Path | None = None,
        machine_pwm: bool = False,
    ) -> None:
        self.board_id = board_id
        self.baud = baud
        self.machine_pwm = machine_pwm
        self.state = state or SimBoardState()
        modules, self.table = load_firmware(board_id, firmware_dir)
        self._core_mod = modules["clawseed_core"]
        self._hw_mod = modules["clawseed_hw"]
        self._loop_mod = modules["clawseed_loop"]
        self.core: Any = self._new_core()
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        if fs_dir is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="clawseed-virtual-fs-")
            fs_dir = Path(self._tmp.name)
        self.fs_dir = fs_dir
        self.resets = 0
        self.hard_resets = 0
        #: Times the firmware loop gave up and left the board at the REPL.
        self.gave_up = 0
        self._hard = False  # the next restart is a hard reset
        self.serial_number = f"VIRTUAL-{board_id.upper()}"
        self._master: int | None = None
        self._slave: int | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self.path = ""
        self.error: BaseException | None = None

    def start(self) -> VirtualBoard:
        """Open the pty and start the firmware loop on its own (daemon) thread."""
        if self._thread is not None:
            return self
        master, slave = os.openpty()
        # Raw: no echo, no line editing, bytes pass unchanged (as on a UART).
        tty.setraw(slave)
        os.set_blocking(master, False)
        self._master, self._slave = master, slave
        self.path = os.ttyname(slave)
        stream = _PtyStream(master, self.baud)
        self._thread = threading.Thread(
            target=self._serve, args=(stream,), name=f"virtual-{self.board_id}", daemon=True
        )
        self._thread.start()
        return self

    def _new_core(self) -> Any:
        machine = make_machine(self.state, machine_pwm=self.machine_pwm)
        hw = self._hw_mod.Hardware(machine, make_pyb(self.state, machine))
        return self._core_mod.Core(hw, self.table)

    def _halted(self) -> bool:
        # The firmware loop ends at close(), and when the hardware watchdog runs out (on a
        # board only a hung loop lets that happen: the loop feeds it every round).
        if self.state.wdt_expired():
            self._hard = True
        return self._stop.is_set() or self._hard

    def _serve(self, stream: _PtyStream) -> None:
        try:
            while not self._stop.is_set():
                try:
                    self._loop_mod.serve(self.core, stream, stream, stop=self._halted)
                    if self._stop.is_set():
                        return
                except KeyboardInterrupt:
                    # The loop has put the outputs in their safe state.
                    if not self._repl(stream):
                        return
                except Exception as exc:
                    # The loop gave up (outputs safe): main.py ends with a traceback and the
                    # board sits at the REPL, as a real one does.
                    self.gave_up += 1
                    if not self._repl(stream, crashed=exc):
                        return
                if self._hard:
                    self._hard = False
                    self.state.hard_reset()
                    self.hard_resets += 1
                self.core = self._new_core()  # main.py runs again after the reset
                self.resets += 1
        except BaseException as exc:  # kept for the test that looks; a thread cannot raise
            self.error = exc

    def _repl(self, stream: _PtyStream, crashed: BaseException | None = None) -> bool:
        """Be the REPL until a soft reset (True) or :meth:`close` (False)."""
        banner = f"MicroPython (virtual) on CPython; {self.board_id} with the clawseed firmware"
        repl = VirtualRepl(self.fs_dir, banner)
        stream.interrupts = False
        try:
            stream.write(repl.interrupted() if crashed is None else repl.crashed(crashed))
            data, stream.pending = stream.pending, b""
            while not self._stop.is_set():
                if data:
                    stream.write(repl.feed(data))
                    if repl.reboot:
                        self._hard = repl.hard_reset
                        return True
                if self.state.wdt_expired():
                    self._hard = True  # nothing feeds the hardware watchdog at the REPL
                    return True
                ready, _, _ = select.select([stream.fd], [], [], 0.05)
                data = stream.read(4096) if ready else b""
            return False
        finally:
            stream.interrupts = True

    def press_reset(self) -> None:
        """Press the board's reset button: the MCU restarts (pins in their reset state, the
        hardware watchdog off) and runs the firmware again; the USB port stays open."""
        self._hard = True

    def unplug(self) -> None:
        """Pull the cable: the firmware stops and the pty goes away (the host's reads fail)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        for fd in (self._master, self._slave):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._master = self._slave = None

    def replug(self) -> VirtualBoard:
        """Plug it back: a fresh firmware (as after power-up) on a new pty (a new path)."""
        self.unplug()
        self._stop = threading.Event()
        self.state.wdt = None  # powered off and on: the hardware watchdog stopped
        self.core = self._new_core()
        return self.start()

    @property
    def plugged(self) -> bool:
        """Whether the board is reachable (started and not unplugged)."""
        return self._thread is not None

    def port_info(self) -> FoundPort:
        """How the board shows up on USB: its pty path, the ST-LINK id, a serial number."""
        board = default_registry().get(self.board_id)
        return FoundPort(self.path, board.usb[0], self.serial_number, "virtual Nucleo")

    def lister(self) -> list[FoundPort]:
        """A port lister that sees this board while it is plugged (for the host driver)."""
        return [self.port_info()] if self.plugged else []

    def close(self) -> None:
        """Stop the loop, close the pty and remove a temporary filesystem. Idempotent."""
        self.unplug()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> VirtualBoard:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

"""Deploy: copy the firmware to a board through MicroPython's raw REPL, verify, restart.

The raw REPL is driven by mpremote's ``SerialTransport`` used as a library (pinned; it
handles raw-paste and its fallback). Steps, each bounded in time:

0. if the running firmware reports its hardware watchdog on (``hello``: ``hw_watchdog_ms``),
   reset the board first (``machine.reset()`` from the raw REPL): nothing feeds that watchdog
   at the REPL, so it would reset the board in the middle of the copy, and only a reset stops
   it; the firmware then boots with it off (the host starts it, deploy does not);
1. interrupt the running firmware (Ctrl-C reaches the REPL: the firmware never disables it)
   and enter the raw REPL;
2. remove stale copies that would shadow the new files (a ``clawseed_core.py`` beside a new
   ``clawseed_core.mpy`` is imported first);
3. write every file of the :class:`~.bundle.FirmwareBundle` (``main.py`` last) and verify each
   by its SHA-256, computed on the board;
4. soft-reset, so ``main.py`` starts the firmware, and confirm with ``hello`` that the board
   runs this firmware version and pin table.

Blocking: call it from a thread (the CLI runs it directly). mpremote is imported on use.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from clawseed_edge.api import BoardNotFound, BoardProtocolError, HardwareError

from .bundle import COMPILED_MODULES, FirmwareBundle
from .protocol import Reply, SerialProtocol

__all__ = ["DeployResult", "Progress", "deploy_bundle", "hello_over_serial"]

Progress = Callable[[str, int, int], None]
"""Called as ``progress(file name, bytes written, file size)``."""

READ_TIMEOUT_S = 5.0  # one serial read; mpremote blocks on reads without it
RAW_REPL_TIMEOUT_S = 10.0
CHUNK = 512  # bytes per raw-REPL write (each is one exec round trip)
HELLO_PROBE_S = 1.0  # how long deploy asks a running firmware about its hardware watchdog


@dataclass
class DeployResult:
    """What a deploy did."""

    port: str
    board_id: str
    files: list[str] = field(default_factory=list)
    bytes: int = 0
    hello: dict[str, Any] | None = None


def _transport(port: str) -> Any:
    try:
        from mpremote.transport import TransportError
        from mpremote.transport_serial import SerialTransport
    except ImportError as exc:  # pragma: no cover - a dependency of the package
        raise HardwareError("mpremote is not installed: `pip install clawseed-edge`") from exc
    try:
        return SerialTransport(port, baudrate=115200, timeout=READ_TIMEOUT_S)
    except (TransportError, OSError) as exc:
        raise BoardNotFound(
            f"cannot open {port}: {exc}; check the cable and that no other program "
            "(a running `clawseed-edge run`, a terminal) holds the port"
        ) from exc


def deploy_bundle(
    port: str,
    bundle: FirmwareBundle,
    *,
    pins_hash: str | None = None,
    progress: Progress | None = None,
    restart: bool = True,
    confirm_timeout_s: float = 10.0,
) -> DeployResult:
    """Copy ``bundle`` to the board at ``port``, verify it, and (``restart``) confirm it runs.

    Args:
        port: A device path or pyserial URL.
        bundle: The files to write.
        pins_hash: The pin table hash the restarted board must report (None: not checked).
        progress: Called after each chunk.
        restart: Soft-reset afterwards and wait for ``hello`` (False leaves the board at the
            raw REPL, for boards that cannot run the UART loop).
        confirm_timeout_s: How long to wait for the restarted firmware's ``hello``.

    Raises:
        BoardNotFound: The port cannot be opened.
        HardwareError: The raw REPL did not answer, a write failed, or a file's hash differs
            (names the file; run deploy again).
        BoardProtocolError: The restarted board reports another version or pin table.
    """
    from mpremote.transport import TransportError

    result = DeployResult(port, bundle.board_id)
    _reset_if_hardware_watchdog(port, confirm_timeout_s)
    transport = _transport(port)
    try:
        try:
            transport.enter_raw_repl(soft_reset=False, timeout_overall=RAW_REPL_TIMEOUT_S)
            _remove_stale(transport, bundle)
            for name, data in bundle.files.items():
                _write_verified(transport, name, data, progress)
                result.files.append(name)
                result.bytes += len(data)
            if restart:
                transport.exit_raw_repl()
                transport.serial.write(b"\x04")  # soft reset: boot runs main.py
        except TransportError as exc:
            raise HardwareError(
                f"the board at {port} did not answer on the raw REPL ({exc}); press the "
                "board's reset button and run deploy again"
            ) from exc
    finally:
        if not restart:
            transport.serial.write(b"\r\x02")  # leave the raw REPL
        transport.close()
    if restart:
        result.hello = hello_over_serial(port, timeout_s=confirm_timeout_s)
        _check_hello(result.hello, bundle, pins_hash)
    return result


def _reset_if_hardware_watchdog(port: str, boot_timeout_s: float) -> None:
    from mpremote.transport import TransportError

    try:
        running = hello_over_serial(port, timeout_s=HELLO_PROBE_S)
    except BoardProtocolError:
        return  # no firmware answers: at the REPL already, or not deployed yet
    if not running.get("hw_watchdog_ms"):
        return
    transport = _transport(port)
    try:
        transport.enter_raw_repl(soft_reset=False, timeout_overall=RAW_REPL_TIMEOUT_S)
        transport.exec_raw_no_follow("import machine\nmachine.reset()")
    except TransportError as exc:
        raise HardwareError(
            f"the board at {port} runs its hardware watchdog and did not take the reset "
            f"({exc}); press its reset button and run deploy again"
        ) from exc
    finally:
        transport.close()
    # Booted again (the ST-LINK's serial port stays open through an MCU reset): the firmware
    # answers with its hardware watchdog off.
    after = hello_over_serial(port, timeout_s=boot_timeout_s)
    if after.get("hw_watchdog_ms"):
        raise HardwareError(
            f"the board at {port} still runs its hardware watchdog after a reset; stop "
            "clawseed-edge (it restarts the watchdog on connect) and run deploy again"
        )


def _remove_stale(transport: Any, bundle: FirmwareBundle) -> None:
    shipped = set(bundle.files)
    stale = []
    for name in (*COMPILED_MODULES, "clawseed_pins"):
        for ext in (".py", ".mpy"):
            if name + ext not in shipped:
                stale.append(name + ext)
    transport.exec(
        f"import os\nfor n in {stale!r}:\n try:\n  os.remove(n)\n except OSError:\n  pass\n"
    )


def _write_verified(transport: Any, name: str, data: bytes, progress: Progress | None) -> None:
    def report(written: int, total: int) -> None:
        if progress is not None:
            progress(name, written, total)

    transport.fs_writefile(name, data, chunk_size=CHUNK, progress_callback=report)
    digest = transport.fs_hashfile(name, "sha256")
    if digest != hashlib.sha256(data).digest():
        raise HardwareError(
            f"{name} on the board does not match what was sent (SHA-256 differs); the copy "
            "was damaged: run deploy again"
        )


def hello_over_serial(port: str, *, timeout_s: float = 10.0) -> dict[str, Any]:
    """Send ``hello`` until the firmware answers (it may still be booting); its result.

    Raises:
        BoardNotFound: The port cannot be opened.
        BoardProtocolError: No ``hello`` reply within ``timeout_s`` seconds.
    """
    import serial

    proto = SerialProtocol()
    deadline = time.monotonic() + timeout_s
    try:
        link = serial.serial_for_url(port, baudrate=115200, timeout=0.2)
    except (serial.SerialException, OSError) as exc:
        raise BoardNotFound(f"cannot open {port}: {exc}") from exc
    try:
        while time.monotonic() < deadline:
            rid, line = proto.encode("hello")
            link.write(line)
            resend = time.monotonic() + 0.5
            while time.monotonic() < min(resend, deadline):
                for item in proto.feed(link.read(256)):
                    if isinstance(item, Reply) and item.id == rid and item.ok:
                        return dict(item.result)
    finally:
        link.close()
    raise BoardProtocolError(
        f"no hello from the firmware at {port} within {timeout_s:g} s; is MicroPython flashed "
        "(`clawseed-edge flash`) and the firmware deployed (`clawseed-edge deploy`)?"
    )


def _check_hello(hello: dict[str, Any], bundle: FirmwareBundle, pins_hash: str | None) -> None:
    if hello.get("fw") != bundle.version:
        raise BoardProtocolError(
            f"the board runs firmware {hello.get('fw')!r} after deploying {bundle.version!r}: "
            f"an older copy still wins; hello said {json.dumps(hello)}"
        )
    if pins_hash is not None and hello.get("pins_hash") != pins_hash:
        raise BoardProtocolError(
            f"the board's pin table is {hello.get('pins_hash')!r}, expected {pins_hash!r} for "
            f"{bundle.board_id}"
        )

# clawseed-edge firmware: the thin UART loop around the core.
#
# Reads the REPL stream (on a Nucleo: USART2, the ST-LINK virtual COM port,
# 115200 8N1) without blocking, feeds the bytes to the core, writes its reply
# and event lines, and ticks the core for edges and the watchdog.
#
# Ctrl-C still reaches the REPL: the loop never turns keyboard interrupts off,
# so MicroPython raises KeyboardInterrupt out of poll()/read(); the loop then
# puts every output in its safe state and returns to the REPL, where a raw-REPL
# deploy always works.
#
# Any other exception in one round of the loop (a MemoryError while a reply is
# built, a failing pin read in tick) is answered with an error line and the loop
# keeps serving. Only a fault it cannot get past (the error line itself cannot be
# written, or MAX_FAILURES rounds fail in a row) ends it: outputs safe, then the REPL.

import gc
import select
import sys
import time

import clawseed_core

POLL_MS = 10  # how long one poll waits for input: the edge and watchdog resolution
READ_CHUNK = 64  # bytes read per wake-up
MAX_FAILURES = 50  # rounds failing in a row before the loop gives up


_ticks_ms = getattr(time, "ticks_ms", None)


def _now_ms():
    if _ticks_ms is not None:
        return _ticks_ms()
    return int(getattr(time, "monotonic")() * 1000)  # CPython: the virtual board


def serve(core, rx, tx, stop=None):
    """Run the loop until `stop()` is true or Ctrl-C.

    Args:
        core: a clawseed_core.Core.
        rx: a readable stream (sys.stdin.buffer on the board); polled, never blocked on.
        tx: a writable stream for reply lines.
        stop: a function that returns true to end the loop (the virtual board's); None on
            the board, where only Ctrl-C or a reset ends it.
    """
    poller = select.poll()
    poller.register(rx, select.POLLIN)
    failures = 0
    try:
        while stop is None or not stop():
            try:
                _round(core, poller, rx, tx)
                failures = 0
            except Exception as exc:  # not KeyboardInterrupt: Ctrl-C ends the loop below
                failures += 1
                if failures >= MAX_FAILURES:
                    raise
                _report(tx, exc)
    except BaseException:
        # Ctrl-C, or a fault the loop cannot get past: every output safe before the REPL.
        core.safe_all()
        raise


def _round(core, poller, rx, tx):
    # One round: tick (edges, watchdogs), read what came, answer it.
    lines = core.tick(_now_ms())
    if poller.poll(POLL_MS):
        # One byte per read: MicroPython's stdin.buffer.read(n) blocks until n bytes
        # came, and poll() promises only one.
        data = b""
        while len(data) < READ_CHUNK and poller.poll(0):
            byte = rx.read(1)
            if not byte:
                break
            data += byte
        lines.extend(core.feed(data))
    for line in lines:
        tx.write(line.encode() + b"\n")
    if lines and hasattr(tx, "flush"):
        tx.flush()


def _report(tx, exc):
    # Built without json: after a MemoryError json.dumps may fail again. A class name needs
    # no escaping.
    gc.collect()
    line = (
        '{"id": null, "ok": false, "error": {"code": "internal", "message": "the firmware '
        'loop failed (%s); the requests it was reading may be lost: send them again"}}\n'
        % type(exc).__name__
    )
    tx.write(line.encode())
    if hasattr(tx, "flush"):
        tx.flush()


def run():
    """Entry point on the board (called from main.py)."""
    import machine

    import clawseed_hw
    import clawseed_pins

    core = clawseed_core.Core(clawseed_hw.Hardware(machine), clawseed_pins)
    serve(core, sys.stdin.buffer, sys.stdout.buffer)

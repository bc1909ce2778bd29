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

import select
import sys
import time

import clawseed_core

POLL_MS = 10  # how long one poll waits for input: the edge and watchdog resolution
READ_CHUNK = 64  # bytes read per wake-up


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
    try:
        while stop is None or not stop():
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
    except KeyboardInterrupt:
        core.safe_all()
        raise


def run():
    """Entry point on the board (called from main.py)."""
    import machine

    import clawseed_hw
    import clawseed_pins

    core = clawseed_core.Core(clawseed_hw.Hardware(machine), clawseed_pins)
    serve(core, sys.stdin.buffer, sys.stdout.buffer)

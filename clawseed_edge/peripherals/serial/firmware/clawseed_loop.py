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
# keeps serving, pausing longer after each failing round in a row (BACKOFF_MS: a
# fault that lasts costs no flood of error lines, and a passing one -- the heap
# freed, a glitch gone -- is waited out). Only a fault it cannot get past (the
# error line itself cannot be written, or no round succeeds for GIVE_UP_MS) ends
# it: outputs safe, then the REPL, where the host notices the prompt and resets it.

import gc
import select
import sys
import time

import clawseed_core

POLL_MS = 10  # how long one poll waits for input: the edge and watchdog resolution
READ_CHUNK = 64  # bytes read per wake-up
BACKOFF_MS = (10, 1000)  # the first and the longest pause after a failing round
GIVE_UP_MS = 60000  # failing this long without one good round ends the loop


_ticks_ms = getattr(time, "ticks_ms", None)
_ticks_diff = getattr(time, "ticks_diff", None)
_sleep_ms = getattr(time, "sleep_ms", None)


def _now_ms():
    if _ticks_ms is not None:
        return _ticks_ms()
    return int(getattr(time, "monotonic")() * 1000)  # CPython: the virtual board


def _since(now, then):
    # ticks_ms wraps on the board: ticks_diff is the only right subtraction there.
    if _ticks_diff is not None:
        return _ticks_diff(now, then)
    return now - then


def _pause(ms):
    if _sleep_ms is not None:
        _sleep_ms(ms)
    else:
        time.sleep(ms / 1000)


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
    failing_since = None  # when the current run of failing rounds began (ms)
    pause = 0
    try:
        while stop is None or not stop():
            try:
                _round(core, poller, rx, tx)
                failing_since = None
                pause = 0
            except Exception as exc:  # not KeyboardInterrupt: Ctrl-C ends the loop below
                now = _now_ms()
                if failing_since is None:
                    failing_since = now
                elif _since(now, failing_since) >= GIVE_UP_MS:
                    raise
                _report(tx, exc)
                # Back off: 10, 20, 40 ... 1000 ms between failing rounds.
                pause = min(BACKOFF_MS[1], max(BACKOFF_MS[0], pause * 2))
                _pause(pause)
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

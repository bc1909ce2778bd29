# clawseed-edge firmware core: JSON-lines requests in, reply lines out.
#
# Pure: no UART, no clock of its own, no `import machine`. The board's UART loop
# (clawseed_loop.py), the virtual board on CPython and the tests under the
# webassembly port all drive this same code through `feed(bytes)`,
# `handle(line)` and `tick(now_ms)`.
#
# Wire format (shared/DESIGN.md): request {"id": N, "op": "...", "args": {...}},
# reply {"id": N, "ok": true, "result": ...} or
# {"id": N, "ok": false, "error": {"code": "...", "message": "..."}},
# unsolicited {"event": "...", ...}.

import gc
import json
import sys
import time

import clawseed_timers

FW_VERSION = "0.2.0"
PROTOCOL = 1

MAX_LINE = 512  # bytes per request line; longer lines are dropped whole
MAX_ID = 2147483647
MAX_I2C_BYTES = 32
MIN_WATCHDOG_MS = 100
MAX_WATCHDOG_MS = 3600000
MIN_HW_WATCHDOG_MS = 500
MAX_HW_WATCHDOG_MS = 32000  # the STM32 IWDG's longest: 4096 counts of 32 kHz LSI / 256 = 32.768 s
MAX_BOUNCE_MS = 10000
MAX_PWM_HZ = 100000
MAX_EVENTS_PER_TICK = 8  # edge events per tick, so a chattering input cannot flood the host

# Pin capability bits in the generated pin table (clawseed_pins.py).
CAP_IN = 1
CAP_OUT = 2
CAP_PWM = 4
CAP_ADC = 8

ADC_VREF = 3.3  # volts at a raw reading of 65535 (VDDA on a Nucleo-64)


class OpError(Exception):
    # A refused request: `code` goes on the wire, the message says what to do.
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


# MicroPython's ticks wrap and time.ticks_diff knows how; CPython's clock (the virtual board)
# does not wrap, so a plain difference does there.
_ticks_diff = getattr(time, "ticks_diff", None) or (lambda a, b: a - b)


class Core:
    """The protocol core of the firmware.

    Args:
        hw: the hardware layer (clawseed_hw.Hardware over `machine`).
        table: the generated pin table module (BOARD, HASH, PINS, NAMES, RESERVED, I2C).
    """

    def __init__(self, hw, table):
        self.hw = hw
        self.table = table
        self._buf = bytearray()
        self._dropping = False  # inside a line that grew past MAX_LINE
        self._outputs = {}  # pin -> safe value (0/1), for every pin driven as output or PWM
        self._pwm = {}  # pin -> (freq, duty)
        self._inputs = {}  # pin -> [edges, bounce_ms, last value, last change ms]
        self._read_as_input = {}  # pins made inputs by pin.mode or a first pin.read
        self._watchdog_ms = 0  # 0: off until the host asks for it
        self._wdt = None  # machine.WDT once the host asked for it: never stopped again
        self._wdt_ms = 0
        self._session = None  # the host's session number (ping), None since boot
        self._last_rx = None  # ticks of the last valid request
        self._tripped = False
        self._now = 0

    # --- bytes in, lines out -------------------------------------------------

    def feed(self, data):
        """Take received bytes; return the reply lines (no newline) for complete lines."""
        replies = []
        for b in data:
            if b == 10 or b == 13:  # \n or \r ends a line (terminals send \r)
                if self._dropping:
                    self._dropping = False
                    replies.append(
                        _error(
                            None,
                            "line_too_long",
                            "request line longer than %d bytes; send shorter requests" % MAX_LINE,
                        )
                    )
                elif self._buf:
                    line = bytes(self._buf)
                    self._buf = bytearray()
                    replies.append(self.handle(line))
                continue
            if self._dropping:
                continue
            if len(self._buf) >= MAX_LINE:
                self._buf = bytearray()
                self._dropping = True
                continue
            self._buf.append(b)
        return replies

    def handle(self, line):
        """Answer one request line (str or bytes) with one reply line (str, no newline)."""
        try:
            if isinstance(line, (bytes, bytearray)):
                line = line.decode()
            req = json.loads(line)
        except Exception:
            return _error(None, "protocol", "not a JSON request line: %s" % _clip(line))
        if not isinstance(req, dict):
            return _error(None, "protocol", "a request is a JSON object with id, op and args")
        rid = req.get("id")
        if not isinstance(rid, int) or isinstance(rid, bool) or rid < 0 or rid > MAX_ID:
            return _error(None, "protocol", "'id' must be an integer 0..%d" % MAX_ID)
        op = req.get("op")
        args = req.get("args", {})
        if not isinstance(op, str) or not isinstance(args, dict):
            return _error(rid, "protocol", "'op' must be a string and 'args' an object")
        handler = _OPS.get(op)
        if handler is None:
            return _error(rid, "unknown_op", "unknown op %s; known: %s" % (_clip(op), _op_names()))
        self._last_rx = self._now
        self._tripped = False
        try:
            # The reply is built inside the try: a MemoryError in json.dumps is this request's.
            return json.dumps({"id": rid, "ok": True, "result": handler(self, args)})
        except OpError as exc:
            return _error(rid, exc.code, exc.message)
        except OSError as exc:
            return _error(rid, "hw_error", "%s failed: %s" % (op, _errno_text(exc)))
        except MemoryError:
            gc.collect()
            return _error(rid, "no_memory", "%s: the board ran out of memory; try again" % op)
        except Exception as exc:  # keep answering whatever one op did
            return _error(rid, "internal", "%s failed: %s" % (op, _clip(repr(exc))))

    # --- time ----------------------------------------------------------------

    def tick(self, now):
        """Advance to `now` (milliseconds); return event lines (edges, watchdog)."""
        self._now = now
        if self._wdt is not None:
            self._wdt.feed()  # the loop runs: only a hung loop or the REPL lets it bite
        events = []  # type: list[str]
        self._poll_inputs(now, events)
        if (
            self._watchdog_ms
            and not self._tripped
            and self._last_rx is not None
            and _ticks_diff(now, self._last_rx) > self._watchdog_ms
        ):
            self._tripped = True
            pins = self.safe_all()
            events.append(
                json.dumps({"event": "watchdog", "period_ms": self._watchdog_ms, "safe": pins})
            )
        return events

    def _poll_inputs(self, now, events):
        for name in self._inputs:
            if len(events) >= MAX_EVENTS_PER_TICK:
                return
            state = self._inputs[name]
            edges, bounce, last, changed = state
            value = self.hw.pin_read(name)
            if value == last:
                continue
            if changed is not None and _ticks_diff(now, changed) < bounce:
                continue
            state[2] = value
            state[3] = now
            if edges == "both" or (edges == "rising") == (value == 1):
                events.append(json.dumps({"event": "edge", "pin": name, "value": value}))

    # --- safety --------------------------------------------------------------

    def safe_all(self):
        """Every output and PWM pin to its safe value; returns the pins set (sorted)."""
        done = []
        for name in self._pwm:
            try:
                self.hw.pwm_off(name)
            except Exception:
                pass  # the pin write below still tries
        self._pwm = {}
        for name in self._outputs:
            try:
                self.hw.pin_mode(name, "out", None, self._outputs[name])
                done.append(name)
            except Exception:
                pass  # one broken pin must not keep the others live
        done.sort()
        return done

    def _pwm_release(self, name):
        if name in self._pwm:
            self.hw.pwm_off(name)
            del self._pwm[name]

    # --- pins ----------------------------------------------------------------

    def resolve(self, args, key="pin", need=0):
        """The canonical pin for args[key], refusing unknown, reserved and incapable pins."""
        raw = args.get(key)
        if not isinstance(raw, str) or not raw:
            raise OpError("bad_args", "'%s' must be a pin name such as PA5 or D13" % key)
        upper = raw.strip().upper()
        name = self.table.NAMES.get(upper, upper)
        if name in self.table.RESERVED:
            raise OpError(
                "pin_reserved",
                "pin %s is reserved on %s: %s"
                % (name, self.table.BOARD, self.table.RESERVED[name]),
            )
        spec = self.table.PINS.get(name)
        if spec is None:
            raise OpError("pin_invalid", "%s has no pin %s" % (self.table.BOARD, _clip(raw)))
        if need and not spec[0] & need:
            raise OpError("pin_mode", "pin %s cannot %s" % (name, _CAP_WORDS[need]))
        return name


def _check_int(args, key, lo, hi, default=None):
    value = args.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or value < lo or value > hi:
        raise OpError("bad_args", "'%s' must be an integer %d..%d" % (key, lo, hi))
    return value


def _check_bit(args, key="value"):
    value = args.get(key)
    if value is True or value is False:
        return int(value)
    if value != 0 and value != 1:
        raise OpError("bad_args", "'%s' must be 0 or 1" % key)
    return value


def _op_hello(core, args):
    impl = sys.implementation
    return {
        "fw": FW_VERSION,
        "proto": PROTOCOL,
        "board": core.table.BOARD,
        "pins_hash": core.table.HASH,
        "impl": impl.name,
        "micropython": "%d.%d.%d" % impl.version[:3],
        "platform": sys.platform,
        "mem_free": _mem_free(),
        "hw_watchdog_ms": core._wdt_ms,
    }


def _op_ping(core, args):
    # With a session number, the reply carries the one this boot saw before (null after a
    # reset): the host learns the board restarted and sets its devices up again.
    if "session" not in args:
        return {"pong": True}
    before, core._session = core._session, _check_int(args, "session", 0, MAX_ID)
    return {"pong": True, "session": before}


def _op_pin_mode(core, args):
    mode = args.get("mode")
    if mode not in ("in", "out"):
        raise OpError("bad_args", "'mode' must be 'in' or 'out'")
    name = core.resolve(args, need=CAP_OUT if mode == "out" else CAP_IN)
    pull = args.get("pull")
    if pull not in (None, "up", "down"):
        raise OpError("bad_args", "'pull' must be 'up', 'down' or null")
    core._pwm_release(name)
    if mode == "out":
        safe = _check_bit(args, "safe") if "safe" in args else 0
        value = _check_bit(args, "value") if "value" in args else safe
        core.hw.pin_mode(name, "out", None, value)
        core._inputs.pop(name, None)
        core._outputs[name] = safe
        return {"pin": name, "mode": "out", "value": value}
    edges = args.get("edges")
    if edges not in (None, "rising", "falling", "both"):
        raise OpError("bad_args", "'edges' must be 'rising', 'falling', 'both' or null")
    bounce = _check_int(args, "bounce_ms", 0, MAX_BOUNCE_MS, 20)
    core.hw.pin_mode(name, "in", pull, None)
    core._outputs.pop(name, None)
    core._read_as_input[name] = True
    value = core.hw.pin_read(name)
    if edges is None:
        core._inputs.pop(name, None)
    else:
        core._inputs[name] = [edges, bounce, value, None]
    return {"pin": name, "mode": "in", "value": value}


def _op_pin_read(core, args):
    name = core.resolve(args, need=CAP_IN)
    if name not in core._outputs and name not in core._read_as_input and name not in core._pwm:
        # A pin never configured may sit in its reset state (analog on many STM32s), where a
        # digital read says 0 whatever the level: make it a plain input first.
        core.hw.pin_mode(name, "in", None, None)
        core._read_as_input[name] = True
    return {"value": core.hw.pin_read(name)}


def _drive(core, name, value):
    core._pwm_release(name)
    core._inputs.pop(name, None)
    core._read_as_input.pop(name, None)
    if name not in core._outputs:
        core._outputs[name] = 0
    core.hw.pin_mode(name, "out", None, value)


def _op_pin_write(core, args):
    name = core.resolve(args, need=CAP_OUT)
    value = _check_bit(args)
    _drive(core, name, value)
    return {"value": value}


def _op_pin_toggle(core, args):
    name = core.resolve(args, need=CAP_OUT)
    value = 0 if core.hw.pin_read(name) else 1
    _drive(core, name, value)
    return {"value": value}


def _op_pwm_set(core, args):
    name = core.resolve(args, need=CAP_PWM)
    freq = _check_int(args, "freq", 1, MAX_PWM_HZ, 1000)
    duty = args.get("duty")
    if not isinstance(duty, (int, float)) or isinstance(duty, bool) or duty < 0 or duty > 1:
        raise OpError("bad_args", "'duty' must be a number 0..1")
    refused = clawseed_timers.conflict(core.table, core._pwm, name, freq)
    if refused is not None:
        raise OpError(refused[0], refused[1])
    spec = core.table.PINS[name]
    core._inputs.pop(name, None)
    core._read_as_input.pop(name, None)
    if name not in core._outputs:
        core._outputs[name] = 0
    core.hw.pwm_set(name, freq, int(duty * 65535 + 0.5), spec[2], spec[3])
    core._pwm[name] = (freq, duty)
    return {"pin": name, "freq": freq, "duty": duty}


def _op_adc_read(core, args):
    name = core.resolve(args, need=CAP_ADC)
    if name in core._outputs:
        raise OpError("pin_in_use", "%s is driven as an output; set it to input first" % name)
    raw = core.hw.adc_read(name, core.table.PINS[name][1])
    return {"raw": raw, "volts": round(raw * ADC_VREF / 65535, 3)}


def _i2c_addr(args):
    return _check_int(args, "addr", 8, 119)


def _i2c_reg(args):
    if args.get("reg") is None:
        return None
    return _check_int(args, "reg", 0, 255)


def _i2c_bus(core):
    if core.table.I2C is None:
        raise OpError("unsupported", "%s has no I2C bus in its pin table" % core.table.BOARD)
    return core.table.I2C


def _op_i2c_scan(core, args):
    sda, scl = _i2c_bus(core)
    return {"addresses": sorted(core.hw.i2c_scan(sda, scl))}


def _op_i2c_read(core, args):
    sda, scl = _i2c_bus(core)
    addr = _i2c_addr(args)
    count = _check_int(args, "n", 1, MAX_I2C_BYTES)
    data = core.hw.i2c_read(sda, scl, addr, count, _i2c_reg(args))
    return {"data": _hex(data)}


def _op_i2c_write(core, args):
    sda, scl = _i2c_bus(core)
    addr = _i2c_addr(args)
    text = args.get("data")
    data = None
    if isinstance(text, str) and len(text) % 2 == 0 and 0 < len(text) <= 2 * MAX_I2C_BYTES:
        try:
            data = bytes(int(text[i : i + 2], 16) for i in range(0, len(text), 2))
        except ValueError:
            data = None
    if data is None:
        raise OpError("bad_args", "'data' must be 1..%d bytes as hex ('0a1b')" % MAX_I2C_BYTES)
    core.hw.i2c_write(sda, scl, addr, data, _i2c_reg(args))
    return {"written": len(data)}


def _op_safe(core, args):
    return {"safe": core.safe_all()}


def _op_watchdog(core, args):
    period = _check_int(args, "period_ms", 0, MAX_WATCHDOG_MS)
    if period and period < MIN_WATCHDOG_MS:
        raise OpError(
            "bad_args", "'period_ms' must be 0 (off) or %d..%d" % (MIN_WATCHDOG_MS, MAX_WATCHDOG_MS)
        )
    hardware = args.get("hardware_ms")
    if hardware is not None and hardware != core._wdt_ms:
        if core._wdt_ms:
            raise OpError(
                "bad_args",
                "the hardware watchdog runs at %d ms and cannot be stopped or changed; "
                "press the board's reset button (or power it off) first" % core._wdt_ms,
            )
        hardware = _check_int(args, "hardware_ms", MIN_HW_WATCHDOG_MS, MAX_HW_WATCHDOG_MS)
        core._wdt = core.hw.start_wdt(hardware)
        core._wdt_ms = hardware
    core._watchdog_ms = period
    return {"period_ms": period, "hardware_ms": core._wdt_ms}


_OPS = {
    "hello": _op_hello,
    "ping": _op_ping,
    "pin.mode": _op_pin_mode,
    "pin.read": _op_pin_read,
    "pin.write": _op_pin_write,
    "pin.toggle": _op_pin_toggle,
    "pwm.set": _op_pwm_set,
    "adc.read": _op_adc_read,
    "i2c.scan": _op_i2c_scan,
    "i2c.read": _op_i2c_read,
    "i2c.write": _op_i2c_write,
    "safe": _op_safe,
    "watchdog": _op_watchdog,
}

_CAP_WORDS = {
    CAP_IN: "be read",
    CAP_OUT: "be driven as an output",
    CAP_PWM: "do PWM",
    CAP_ADC: "be read by the ADC",
}


def _op_names():
    names = list(_OPS)
    names.sort()
    return ", ".join(names)


def _error(rid, code, message):
    return json.dumps({"id": rid, "ok": False, "error": {"code": code, "message": message}})


def _clip(text):
    # Echo at most 40 characters of what the host sent, so a reply stays bounded.
    text = str(text)
    return text if len(text) <= 40 else text[:40] + "..."


def _hex(data):
    return "".join("%02x" % b for b in data)


def _errno_text(exc):
    # MicroPython's OSError carries the errno as args[0]; 19 (ENODEV) is a missing I2C ack.
    code = exc.args[0] if exc.args else None
    if code == 19 or code == 5:
        return "no answer from the device (errno %d); check the address and the wiring" % code
    return "errno %s" % (code,)


def _mem_free():
    try:
        return gc.mem_free()
    except AttributeError:
        return -1  # CPython (the virtual board) has no heap counter

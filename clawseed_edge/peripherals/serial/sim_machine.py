"""A simulated MicroPython ``machine`` module, for the virtual board.

The firmware's hardware layer (``firmware/clawseed_hw.py``) is handed a ``machine`` module; on
the virtual board it gets :func:`make_machine`'s, bound to a :class:`SimBoardState` that a test
(or ``sim nucleo``) can inspect and drive: output levels and their history, the level an input
sees, the raw value an ADC pin reads, PWM settings, and devices on the I2C bus.

PWM comes in MicroPython's two forms: ``machine.PWM`` (stm32 from v1.28 on) with
``make_machine(state, machine_pwm=True)``, or, by default, no ``machine.PWM`` and a simulated
``pyb`` module (:func:`make_pyb`) whose ``Timer`` has one frequency shared by its channels, as
the stm32 images up to v1.27 that boards are flashed with.

The webassembly test board (``tests/firmware/wasm/board.mjs``) implements the same semantics
in JavaScript, so both boards answer the same requests with the same replies.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

__all__ = ["PinChange", "SimBoardState", "SimI2CDevice", "make_machine", "make_pyb"]

ENODEV = 19  # what MicroPython's I2C raises when no device acknowledges


@dataclass
class SimI2CDevice:
    """A register-file I2C device: 256 byte registers; a plain read starts at register 0."""

    registers: bytearray = field(default_factory=lambda: bytearray(256))
    pointer: int = 0

    def read(self, count: int) -> bytes:
        out = bytes(self.registers[(self.pointer + i) % 256] for i in range(count))
        self.pointer = (self.pointer + count) % 256
        return out

    def write(self, data: bytes) -> None:
        # The first byte sets the register pointer, the rest are written from there on.
        if not data:
            return
        self.pointer = data[0]
        for b in data[1:]:
            self.registers[self.pointer] = b
            self.pointer = (self.pointer + 1) % 256


@dataclass(frozen=True)
class PinChange:
    """What the firmware just did to a pin: a level, or PWM (``freq`` set; ``level`` is the
    duty 0..1), or PWM stopped (``freq`` 0)."""

    pin: str
    level: float
    freq: int | None = None


@dataclass
class SimBoardState:
    """What the simulated pins are doing; safe to read from any thread.

    Attributes:
        modes: pin -> ``"in"`` / ``"out"`` for pins the firmware configured.
        outputs: pin -> the level it drives (0/1).
        inputs: pin -> the level the outside world puts on it (set by tests).
        pulls: pin -> ``"up"`` / ``"down"`` / None.
        adc: pin -> raw 16-bit reading (0..65535).
        pwm: pin -> (frequency in Hz, duty 0..65535).
        history: every (pin, level) the firmware drove, in order.
        i2c: 7-bit address -> device: anything with ``write(bytes)`` and ``read(n)``, such as
            :class:`SimI2CDevice` or the sensors' chip models
            (``clawseed_edge.peripherals.i2c.sim``: BME280, SHT31, BH1750 ...).
        listeners: called with a :class:`PinChange` whenever an output's level or a PWM
            setting changes (``sim nucleo`` prints them), on the firmware's thread.
        timers: timer number -> frequency, for running ``pyb`` timers.
        timer_inits: timer number -> how often it was (re)initialised (each one restarts the
            counter of every channel on it: a glitch on the other pins).
        routes: pin -> (timer, channel) while a ``pyb`` timer channel drives the pin.
        wdt: (timeout in ms, monotonic seconds of the last feed) once the firmware started the
            hardware watchdog; only a hard reset clears it (:meth:`wdt_expired`).
    """

    modes: dict[str, str] = field(default_factory=dict)
    outputs: dict[str, int] = field(default_factory=dict)
    inputs: dict[str, int] = field(default_factory=dict)
    pulls: dict[str, str | None] = field(default_factory=dict)
    adc: dict[str, int] = field(default_factory=dict)
    pwm: dict[str, tuple[int, int]] = field(default_factory=dict)
    history: list[tuple[str, int]] = field(default_factory=list)
    i2c: dict[int, Any] = field(default_factory=dict)
    listeners: list[Callable[[PinChange], None]] = field(default_factory=list, repr=False)
    timers: dict[int, int] = field(default_factory=dict)
    timer_inits: dict[int, int] = field(default_factory=dict)
    routes: dict[str, tuple[int, int]] = field(default_factory=dict)
    wdt: tuple[int, float] | None = None
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def wdt_expired(self) -> bool:
        """Whether the hardware watchdog runs and was not fed within its timeout."""
        wdt = self.wdt
        return wdt is not None and time.monotonic() - wdt[1] > wdt[0] / 1000

    def hard_reset(self) -> None:
        """What a reset of the MCU does to the pins: every pin an input again (no pull), PWM,
        timers and the hardware watchdog stopped; the outside world (inputs, ADC, I2C) stays."""
        with self.lock:
            for pin in self.modes:
                self.modes[pin] = "in"
                self.pulls[pin] = None
            self.pwm.clear()
            self.routes.clear()
            self.timers.clear()
            self.wdt = None

    def changed(self, change: PinChange) -> None:
        """Tell the listeners (called outside the lock)."""
        for listener in list(self.listeners):
            listener(change)

    def level(self, pin: str) -> int:
        """The level on ``pin`` as the MCU would read it."""
        with self.lock:
            if self.modes.get(pin) == "out":
                return self.outputs.get(pin, 0)
            if pin in self.inputs:
                return self.inputs[pin]
            return 1 if self.pulls.get(pin) == "up" else 0

    def drive_input(self, pin: str, level: int) -> None:
        """Put ``level`` on an input from outside (a button press)."""
        with self.lock:
            self.inputs[pin] = 1 if level else 0


def _set_pwm(state: SimBoardState, pin: str, freq: int, duty_u16: int) -> None:
    with state.lock:
        before = state.pwm.get(pin)
        state.pwm[pin] = (freq, duty_u16)
    if before != (freq, duty_u16):
        state.changed(PinChange(pin, round(duty_u16 / 65535, 4), freq))


def _stop_pwm(state: SimBoardState, pin: str) -> None:
    with state.lock:
        before = state.pwm.pop(pin, None)
    if before is not None:
        state.changed(PinChange(pin, 0.0, 0))


def make_machine(state: SimBoardState, *, machine_pwm: bool = False) -> Any:
    """A ``machine`` module whose Pin, ADC, SoftI2C (and with ``machine_pwm``, PWM) act on
    ``state``; without ``machine_pwm`` the firmware takes its ``pyb.Timer`` path."""

    class Pin:
        IN = 0
        OUT = 1
        PULL_UP = 1
        PULL_DOWN = 2

        def __init__(self, name: str, mode: int = -1, pull: int | None = None) -> None:
            self.name = name
            if mode != -1:
                self.init(mode, pull)

        def init(self, mode: int, pull: int | None = None) -> None:
            started: PinChange | None = None
            # A pin made plain input or output leaves its timer channel (its alternate function).
            if state.routes.pop(self.name, None) is not None:
                _stop_pwm(state, self.name)
            with state.lock:
                if mode == Pin.OUT:
                    if state.modes.get(self.name) != "out":
                        # The line starts driving the level set before (the firmware sets it
                        # first, so the pin never glitches).
                        started = PinChange(self.name, state.outputs.setdefault(self.name, 0))
                    state.modes[self.name] = "out"
                else:
                    state.modes[self.name] = "in"
                    state.pulls[self.name] = {Pin.PULL_UP: "up", Pin.PULL_DOWN: "down"}.get(
                        pull or 0
                    )
            if started is not None:
                state.changed(started)

        def value(self, level: int | None = None) -> int | None:
            if level is None:
                return state.level(self.name)
            bit = 1 if level else 0
            with state.lock:
                before = state.outputs.get(self.name)
                state.outputs[self.name] = bit
                driven = state.modes.get(self.name) == "out"
                if driven:
                    state.history.append((self.name, bit))
            if driven and before != bit:
                state.changed(PinChange(self.name, bit))
            return None

    class PWM:
        def __init__(self, pin: Pin, freq: int, duty_u16: int) -> None:
            self.name = pin.name
            _set_pwm(state, self.name, freq, duty_u16)

        def freq(self, hz: int) -> None:
            _set_pwm(state, self.name, hz, state.pwm[self.name][1])

        def duty_u16(self, duty: int) -> None:
            _set_pwm(state, self.name, state.pwm[self.name][0], duty)

        def deinit(self) -> None:
            _stop_pwm(state, self.name)

    class ADC:
        def __init__(self, pin: Pin) -> None:
            self.name = pin.name

        def read_u16(self) -> int:
            with state.lock:
                return state.adc.get(self.name, 0)

    class SoftI2C:
        def __init__(self, scl: Pin, sda: Pin, freq: int = 100000) -> None:
            self.freq = freq

        def _device(self, addr: int) -> Any:
            device = state.i2c.get(addr)
            if device is None:
                raise OSError(ENODEV)
            return device

        def scan(self) -> list[int]:
            return sorted(state.i2c)

        def readfrom(self, addr: int, count: int) -> bytes:
            with state.lock:
                return bytes(self._device(addr).read(count))

        def readfrom_mem(self, addr: int, reg: int, count: int) -> bytes:
            # A register read on the wire: write the register address, then read.
            with state.lock:
                device = self._device(addr)
                device.write(bytes([reg]))
                return bytes(device.read(count))

        def writeto(self, addr: int, data: bytes) -> None:
            with state.lock:
                self._device(addr).write(bytes(data))

        def writeto_mem(self, addr: int, reg: int, data: bytes) -> None:
            with state.lock:
                self._device(addr).write(bytes([reg]) + bytes(data))

    class WDT:
        # Started once; fed by the firmware's loop; a hard reset of the board clears it.
        def __init__(self, *, timeout: int = 5000, id: int = 0) -> None:
            state.wdt = (timeout, time.monotonic())

        def feed(self) -> None:
            if state.wdt is not None:
                state.wdt = (state.wdt[0], time.monotonic())

    parts: dict[str, Any] = {"Pin": Pin, "ADC": ADC, "SoftI2C": SoftI2C, "WDT": WDT}
    if machine_pwm:
        parts["PWM"] = PWM
    return SimpleNamespace(**parts)


#: The timers' input clock (an F401's, 84 MHz): pyb divides it so a period fits 16 bits.
TIMER_CLOCK_HZ = 84_000_000


def period_ticks(freq: int) -> int:
    """Counter ticks in one period at ``freq`` Hz, as pyb's ``Timer(freq=)`` divides the clock:
    by 5, 3 or 2 (in that preference) until the period fits the 16-bit counter."""
    ticks = TIMER_CLOCK_HZ // max(1, freq)
    while ticks > 0xFFFF:
        if ticks % 5 == 0:
            ticks //= 5
        elif ticks % 3 == 0:
            ticks //= 3
        else:
            ticks //= 2
    return max(1, ticks)


def make_pyb(state: SimBoardState, machine: Any) -> Any:
    """A ``pyb`` module with the ``Timer`` the firmware's PWM fallback uses, on ``state``.

    A timer has one counter: its frequency is every channel's. ``Timer(n, freq=...)``
    (re)initialises it (counted in ``state.timer_inits``), ``freq(hz)`` changes it for every
    channel, ``deinit()`` stops every channel on it. ``channel(...)`` routes a pin to a channel
    until the pin is made a plain input or output again.

    As on real pyb, a channel keeps its compare value (ticks), not its percentage: after
    ``freq(hz)`` the duty is the old compare over the new period, wrong until the firmware
    sets ``pulse_width_percent`` again (so a lost re-set shows in the pin's duty).
    """

    channels: dict[str, Any] = {}  # pin -> the TimerChannel that drives it

    def route_duty(pin: str, timer: int, compare: int) -> None:
        freq = state.timers[timer]
        duty = min(1.0, compare / period_ticks(freq))
        _set_pwm(state, pin, freq, round(duty * 65535))

    class TimerChannel:
        def __init__(self, timer: int, channel: int, pin: str) -> None:
            self.timer, self.channel, self.pin = timer, channel, pin
            self.compare = 0

        def pulse_width_percent(self, percent: float | None = None) -> float | None:
            period = period_ticks(state.timers[self.timer])
            if percent is None:
                return min(100.0, self.compare * 100 / period)
            self.compare = round(float(percent) * period / 100)
            if state.routes.get(self.pin) == (self.timer, self.channel):
                route_duty(self.pin, self.timer, self.compare)
            return None

    class Timer:
        PWM = 0

        def __init__(self, n: int, *, freq: int) -> None:
            self.n = n
            with state.lock:
                state.timer_inits[n] = state.timer_inits.get(n, 0) + 1
                state.timers[n] = freq
            self._update()

        def _update(self) -> None:
            for pin, (timer, _) in list(state.routes.items()):
                if timer == self.n:
                    route_duty(pin, self.n, channels[pin].compare)

        def freq(self, hz: int | None = None) -> int | None:
            if hz is None:
                return state.timers[self.n]
            state.timers[self.n] = hz
            self._update()
            return None

        def channel(
            self, channel: int, mode: int, *, pin: Any, pulse_width_percent: float = 0
        ) -> TimerChannel:
            ch = channels[pin.name] = TimerChannel(self.n, channel, pin.name)
            for other, where in list(state.routes.items()):
                if where == (self.n, channel):  # one channel drives one pin
                    state.routes.pop(other)
                    _stop_pwm(state, other)
            state.routes[pin.name] = (self.n, channel)
            ch.pulse_width_percent(pulse_width_percent)
            return ch

        def deinit(self) -> None:
            for pin, (timer, _) in list(state.routes.items()):
                if timer == self.n:
                    state.routes.pop(pin)
                    _stop_pwm(state, pin)
            state.timers.pop(self.n, None)

    return SimpleNamespace(Timer=Timer, Pin=machine.Pin)

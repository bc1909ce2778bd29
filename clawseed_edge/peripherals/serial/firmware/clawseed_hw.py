# clawseed-edge firmware: the hardware layer under the core, over a `machine` module.
#
# The module is passed in, never imported here: on the board it is MicroPython's
# `machine`, on the virtual board a simulated one, under the webassembly port a
# JS module registered as `machine`. The core above never sees which.
#
# _TYPING is true only for mypy (firmware/mypy.ini: always_true), so the pins, buses and
# converters below are checked against MicroPython's machine stubs; the board never runs
# the import.
_TYPING = False
if _TYPING:
    import machine as _machine


class Hardware:
    """Pins, PWM, ADC and I2C by canonical pin name ("PA5").

    PWM takes one of two paths, chosen by what `machine` offers:
    - `machine.PWM` (MicroPython's stm32 port from v1.28 on; the rp2, esp32 ... ports);
    - otherwise a `pyb.Timer` channel (stm32 up to v1.27, what the flashed images run), numbered
      by the pin table. One timer drives several pins at one frequency: it is set up once and
      kept while any of its channels is in use; a pin leaves its channel when it is made a
      plain output or input again (the caller does that next), the other channels run on.

    Args:
        machine: MicroPython's `machine` module (or a simulated one).
        pyb: the `pyb` module for the timer path (None: imported when first needed).
    """

    def __init__(self, machine, pyb=None):
        self.machine = machine
        self.pyb = pyb
        self._pins = {}  # name -> machine.Pin, created once per name
        self._pwms = {}  # name -> machine.PWM, or (timer number, pyb timer channel)
        self._timers = {}  # timer number -> [pyb.Timer, frequency]
        self._i2c = None
        self._out = {}  # pin name -> True while it is configured as an output

    def _pin(self, name: str) -> "_machine.Pin":
        pin = self._pins.get(name)
        if pin is None:
            pin = self.machine.Pin(name)
            self._pins[name] = pin
        return pin

    def pin_mode(self, name, mode, pull, value):
        m = self.machine
        pin = self._pin(name)
        if mode == "out":
            if name not in self._out:
                # Set the level before switching to output, so the pin never glitches.
                pin.value(value)
                pin.init(m.Pin.OUT)
                self._out[name] = True
            pin.value(value)
        else:
            self._out.pop(name, None)
            if pull == "up":
                pin.init(m.Pin.IN, m.Pin.PULL_UP)
            elif pull == "down":
                pin.init(m.Pin.IN, m.Pin.PULL_DOWN)
            else:
                pin.init(m.Pin.IN)  # no pull (the stubs take an int, not None)

    def pin_read(self, name):
        return 1 if self._pin(name).value() else 0

    def pwm_set(self, name, freq, duty_u16, timer, channel):
        self._out.pop(name, None)  # the timer owns the pin now; a later write re-inits it
        pwm = self._pwms.get(name)
        if hasattr(self.machine, "PWM"):
            if pwm is None:
                new = self.machine.PWM(self._pin(name), freq=freq, duty_u16=duty_u16)  # type: _machine.PWM
                self._pwms[name] = new
            else:
                pwm.freq(freq)
                pwm.duty_u16(duty_u16)
            return
        self._timer_pwm(name, freq, duty_u16 * 100 / 65535, timer, channel)

    def _timer_pwm(self, name, freq, percent, timer, channel):
        # MicroPython's stm32 port before machine.PWM: a pyb timer channel, numbered by the
        # pin table (which timer and channel this pin's alternate function drives).
        pyb = self.pyb
        if pyb is None:
            import pyb as imported

            pyb = self.pyb = imported
        entry = self._timers.get(timer)
        if entry is None:
            # pyb.Timer(n, freq=...) (re)initialises the counter: only for a timer not in use.
            entry = self._timers[timer] = [pyb.Timer(timer, freq=freq), freq]
        elif entry[1] != freq:
            # Only this pin runs on the timer (the core refuses a second frequency).
            entry[0].freq(freq)
            entry[1] = freq
        pwm = self._pwms.get(name)
        if isinstance(pwm, tuple):
            pwm[1].pulse_width_percent(percent)  # recomputed against the current period
            return
        ch = entry[0].channel(
            channel, pyb.Timer.PWM, pin=pyb.Pin(name), pulse_width_percent=percent
        )
        self._pwms[name] = (timer, ch)

    def pwm_off(self, name):
        pwm = self._pwms.pop(name, None)
        if pwm is None:
            return
        if not isinstance(pwm, tuple):
            pwm.deinit()
            return
        # Not tim.deinit() while another channel of this timer runs: it would stop that too.
        # The pin leaves the channel when the caller makes it a plain output or input.
        timer = pwm[0]
        for other in self._pwms.values():
            if isinstance(other, tuple) and other[0] == timer:
                return
        self._timers.pop(timer)[0].deinit()

    def start_wdt(self, timeout_ms):
        # The MCU's independent watchdog: it resets the chip unless fed within timeout_ms,
        # and nothing but a reset stops it.
        wdt = self.machine.WDT(timeout=timeout_ms)  # type: _machine.WDT
        return wdt

    def adc_read(self, name, channel):
        adc = self.machine.ADC(self._pin(name))  # type: _machine.ADC
        return adc.read_u16()

    def _bus(self, sda: str, scl: str) -> "_machine.SoftI2C":
        # A software I2C on the board file's SDA/SCL pins: the same pins on every
        # MicroPython build, whatever hardware bus its board config maps there.
        if self._i2c is None:
            m = self.machine
            self._i2c = m.SoftI2C(scl=self._pin(scl), sda=self._pin(sda), freq=100000)
        return self._i2c

    def i2c_scan(self, sda, scl):
        return list(self._bus(sda, scl).scan())

    def i2c_read(self, sda, scl, addr, count, reg):
        bus = self._bus(sda, scl)
        if reg is None:
            return bytes(bus.readfrom(addr, count))
        return bytes(bus.readfrom_mem(addr, reg, count))

    def i2c_write(self, sda, scl, addr, data, reg):
        bus = self._bus(sda, scl)
        if reg is None:
            bus.writeto(addr, data)
        else:
            bus.writeto_mem(addr, reg, data)

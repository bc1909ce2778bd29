"""One configured device on top of one gpiozero device.

Everything here is synchronous and runs on the owning :class:`~.pi_gpio.PiGpio`'s worker thread
(or, for the exit hook, on the thread that exits). gpiozero exceptions are translated into the
api error tree here, at the boundary.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from clawseed_edge.api import (
    DeviceClosed,
    HardwareError,
    PinInUse,
    PinInvalid,
    PinModeUnsupported,
)

from ..wired import PinDevice, WiredDevice

__all__ = ["GpioDevice", "translate_gpio_error"]

InputCallback = Callable[[str, str, int], None]


def translate_gpio_error(exc: Exception, device: str, pin: str) -> HardwareError:
    """An api error for a gpiozero exception raised while handling ``device`` on ``pin``."""
    from gpiozero import exc as gz

    where = f"device {device!r} on {pin}"
    if isinstance(exc, gz.GPIOPinInUse):
        return PinInUse(f"{where}: the pin is already in use ({exc}); is another program using it?")
    if isinstance(exc, gz.PinInvalidPin):
        return PinInvalid(f"{where}: the pin factory has no such pin ({exc})")
    if isinstance(exc, gz.PinPWMUnsupported | gz.PinFixedPull | gz.PinInvalidFunction):
        return PinModeUnsupported(f"{where}: {exc}")
    return HardwareError(f"{where}: {type(exc).__name__}: {exc}")


class GpioDevice(PinDevice):
    """A configured device and its gpiozero device: the Pi header's :class:`~..wired.PinDevice`.

    Attributes:
        wired: The validated configuration and board pin.
        value: The last value written or read: 0/1 for switches, 0..1 for ``pwm_led``,
            -1..1 for ``servo`` (None when a servo is detached), 0/1 for inputs.
    """

    def __init__(self, wired: WiredDevice) -> None:
        super().__init__(wired)
        self._dev: Any = None

    @property
    def gpiozero_device(self) -> Any:
        """The underlying gpiozero device (None before open / after close)."""
        return self._dev

    def open(
        self, factory: Any, on_input: InputCallback | None = None, *, at_safe: bool = False
    ) -> None:
        """Create the gpiozero device on ``factory``; raises api errors, never gpiozero's.

        With ``at_safe`` an output starts at its safe value instead of its ``initial`` one
        (an emergency stop must never pass through a value that is not safe).
        """
        try:
            self._dev = self._build(factory, at_safe)
        except Exception as exc:
            raise translate_gpio_error(exc, self.name, self.pin_name) from exc
        if not self.is_output:
            self.value = self.read()
            if on_input is not None:
                name, pin = self.name, self.pin_name
                self._dev.when_activated = lambda: on_input(name, pin, 1)
                self._dev.when_deactivated = lambda: on_input(name, pin, 0)
        else:
            self.value = self._read_output()

    def _build(self, factory: Any, at_safe: bool = False) -> Any:
        import gpiozero

        cfg = self.wired.config
        spec = cfg.spec
        cls = getattr(gpiozero, spec.gpiozero_class)
        pin = self.pin_name
        initial = self.start_value(at_safe=at_safe)
        if not spec.is_output:
            return self._build_input(cls, factory)
        if spec.colour:  # pin is red; the extra pins green and blue
            green, blue = (p.name for p in self.wired.extra)
            on = 1.0 if initial == "on" else 0.0
            return cls(
                pin,
                green,
                blue,
                active_high=cfg.active_high,
                initial_value=(on, on, on),
                pin_factory=factory,
            )
        if spec.pulses:  # a servo: "off" means no pulses
            value = None if initial == "off" else cfg.position_of(self.level_of(initial))
            servo_pulses = getattr(factory.pin(pin), "use_servo_pulses", None)
            if servo_pulses is not None:
                servo_pulses()  # lgpio: pulse widths in microseconds (tx_servo)
            return cls(
                pin,
                initial_value=value,
                min_pulse_width=cfg.min_pulse_us / 1e6,
                max_pulse_width=cfg.max_pulse_us / 1e6,
                pin_factory=factory,
            )
        if spec.detaches:  # "off" means no pulses (a tonal buzzer is silent)
            value = None if initial == "off" else self.level_of(initial)
            return cls(pin, initial_value=value, pin_factory=factory)
        if spec.level:
            level = self.level_of(initial)
            # gpiozero makes a PWM line an output at the level it holds (high at boot on some
            # pins) and starts PWM there: claim it at the safe level first, so a load never
            # starts fully on (active-low: the line high; active-high: low).
            factory.pin(pin).output_with_state((cfg.safe == "on") == cfg.active_high)
            return cls(pin, active_high=cfg.active_high, initial_value=level, pin_factory=factory)
        return cls(
            pin, active_high=cfg.active_high, initial_value=initial == "on", pin_factory=factory
        )

    def _build_input(self, cls: Any, factory: Any) -> Any:
        cfg = self.wired.config
        bounce = None if cfg.bounce_ms is None else cfg.bounce_ms / 1000.0
        if cls.__name__ == "DistanceSensor":
            trigger = self.wired.extra[0].name
            if type(factory).__name__ == "MockFactory":
                from .pins import mock_echo_pins

                mock_echo_pins(factory, self.pin_name, trigger)
            # partial: a reading is available before the queue of 9 samples is full. gpiozero
            # warns that only pigpio times echoes precisely; lgpio is what a Pi 5 has.
            from gpiozero import PWMSoftwareFallback

            with warnings.catch_warnings():
                warnings.simplefilter("ignore", PWMSoftwareFallback)
                return cls(
                    echo=self.pin_name,
                    trigger=trigger,
                    max_distance=4.0,
                    partial=True,
                    pin_factory=factory,
                )
        if cls.__name__ == "MotionSensor":
            # A PIR drives its output actively: no pull unless the config asks for one.
            # sample_rate 10/s with a queue of 5 reports motion after half a second of "high".
            return cls(
                self.pin_name,
                pull_up=cfg.pull_up if cfg.pull_up is not None else False,
                queue_len=5,
                sample_rate=10,
                threshold=0.5,
                pin_factory=factory,
            )
        pull_up = cfg.effective_pull_up
        # With an external pull (None), active_high says which level is "active".
        active_state = cfg.active_high if pull_up is None else None
        if cls.__name__ == "Button":
            # gpiozero's Button is HoldMixin + DigitalInputDevice, and HoldMixin starts a thread
            # that wakes 10 times a second, for ever, to fire ``when_held``; no button here has a
            # hold time, so the input device alone: its events come from the pin's edge
            # callback (lgpio's alerts, MockPin's drive_*), the same pull, bounce and levels.
            import gpiozero

            cls = gpiozero.DigitalInputDevice
        return cls(
            self.pin_name,
            pull_up=pull_up,
            active_state=active_state,
            bounce_time=bounce,
            pin_factory=factory,
        )

    def _read_output(self) -> float | None:
        return self._from_device(self._dev.value)

    def _from_device(self, raw: Any) -> float | None:
        # A servo reports its position (-1..1); the config speaks angles when it has them.
        if raw is None:
            return None
        if self.spec.pulses:
            return round(self.wired.config.angle_of(float(raw)), 9)
        return _scalar(raw)

    # --- operations (worker thread) -----------------------------------------------------------

    def write(self, value: float | None) -> float | None:
        """Drive the output to ``value`` (already checked against the range by the caller).

        For switches any value > 0 is "on". For a servo, None detaches it (no pulses).
        """
        dev = self._dev
        if dev is None:
            raise DeviceClosed(
                f"device {self.name!r} is closed (its peripheral is not connected); "
                "connect a new peripheral to use it"
            )
        try:
            if self.spec.tone:
                # Only silence is written here; notes go through play().
                dev.stop()
            elif self.spec.level:
                if value is None:
                    dev.detach() if self.spec.detaches else dev.off()
                elif self.spec.pulses:
                    dev.value = self.wired.config.position_of(value)
                else:
                    dev.value = value
            elif value:
                dev.on()
            else:
                dev.off()
            self.value = self._read_output()
        except HardwareError:
            raise
        except Exception as exc:
            raise translate_gpio_error(exc, self.name, self.pin_name) from exc
        return self.value

    def set_colour(self, rgb: tuple[float, float, float]) -> float | None:
        """Show ``rgb`` (each 0..1, checked by the caller) on an ``rgb_led``."""
        dev = self._dev
        if dev is None:
            raise DeviceClosed(f"device {self.name!r} is closed (its peripheral is not connected)")
        try:
            dev.value = rgb
        except Exception as exc:
            raise translate_gpio_error(exc, self.name, self.pin_name) from exc
        self.value = self._read_output()
        return self.value

    def play(self, note: Any) -> float | None:
        """Play ``note`` (``"A4"``, ``"C#5"``, ``440``, ``"440 Hz"``) until told otherwise;
        ``"off"`` (or ``stop``, ``silence``) silences the buzzer.

        Raises:
            ToolArgumentsInvalid: Not a note, or outside the buzzer's range (both named).
        """
        from ..wired.notes import is_silence, parse_note

        dev = self._dev
        if dev is None:
            raise DeviceClosed(f"device {self.name!r} is closed (its peripheral is not connected)")
        if is_silence(note):
            return self.write(None)
        tone = parse_note(note, dev.min_tone, dev.max_tone)
        try:
            dev.play(tone)
        except Exception as exc:
            raise translate_gpio_error(exc, self.name, self.pin_name) from exc
        self.value = self._read_output()
        return self.value

    def read(self) -> float | None:
        """The device's current value (inputs: 1 active / 0 inactive)."""
        dev = self._dev
        if dev is None:
            raise DeviceClosed(
                f"device {self.name!r} is closed (its peripheral is not connected); "
                "connect a new peripheral to use it"
            )
        try:
            # A distance sensor's value is a fraction of its range; its distance is metres.
            raw = dev.distance if self.spec.unit == "m" else dev.value
        except Exception as exc:
            raise translate_gpio_error(exc, self.name, self.pin_name) from exc
        self.value = self._from_device(raw)
        return self.value

    def apply_safe(self) -> None:
        """Drive an output to its safe value; inputs are left alone."""
        if self.is_output and self._dev is not None:
            self.write(self.safe_value())

    def state(self) -> dict[str, Any]:
        """The device and its pin as plain data (for status, tests and a dashboard)."""
        pin_obj = getattr(self._dev, "pin", None)
        if pin_obj is None:  # a Servo wraps a PWMOutputDevice
            pin_obj = getattr(getattr(self._dev, "pwm_device", None), "pin", None)
        if pin_obj is None and self.spec.colour:
            # gpiozero's RGBLED exposes no pins; its three PWMLEDs are in ``_leds`` (red first).
            leds = getattr(self._dev, "_leds", ())
            pin_obj = leds[0].pin if leds else None
        level: float | None = None
        mode = "closed"
        frequency = None
        if pin_obj is not None:
            level = float(pin_obj.state)
            mode = pin_obj.function
            frequency = pin_obj.frequency
            if mode == "output" and frequency:
                mode = "pwm"
        value = None
        if self._dev is not None:
            value = self.read() if not self.is_output else self._read_output()
        # The base's fields (the level range among them), then what the pin tells.
        return {
            **super().state(),
            "mode": mode,
            "value": value,
            "level": level,
            "frequency": frequency,
        }

    def close(self) -> None:
        """Close the gpiozero device (the pin becomes an input). Idempotent."""
        dev, self._dev = self._dev, None
        if dev is not None:
            try:
                dev.close()
            except Exception as exc:
                raise translate_gpio_error(exc, self.name, self.pin_name) from exc


def _scalar(raw: Any) -> float | None:
    """A device value as one number: an RGBLED's (r, g, b) becomes its brightest channel."""
    if raw is None:
        return None
    if isinstance(raw, tuple):
        return float(max(raw))
    return float(raw)

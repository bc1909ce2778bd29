"""Configured devices on a Nucleo's pins, as firmware requests.

A :class:`SerialDevice` is the Nucleo's :class:`~..wired.PinDevice`: the shared model says what a
value means; this turns it into protocol requests and back (a pin level honouring
``active_high``, a PWM duty, a servo pulse, an input being active). It does no I/O:
:class:`~.board.SerialBoard` sends what it builds.

:func:`check_nucleo_devices` adds what a Nucleo needs beyond the common wiring checks: two PWM
devices cannot share a timer channel, nor a timer at two frequencies (an STM32 timer has one
counter: every channel on it runs at its frequency, so a servo's 50 Hz beside a lamp's 1 kHz
would become 1 kHz), and a safe value must be a pin level (the firmware's watchdog sets
levels; it cannot hold a PWM duty or a servo position).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from clawseed_edge.api import ConfigInvalid, PinInUse

from ..boards import BoardSpec, timer_channel
from ..wired import DeviceConfig, PinDevice, WiredDevice

__all__ = [
    "PWM_FREQ_HZ",
    "SERVO_FREQ_HZ",
    "SerialDevice",
    "check_nucleo_devices",
    "pwm_frequency",
]

PWM_FREQ_HZ = 1000  # a pwm_led: fast enough not to flicker
SERVO_FREQ_HZ = 50  # hobby servos: one pulse every 20 ms
#: Kinds the firmware cannot carry out, and what to do instead (refused at config load: a
#: device that is accepted and then refuses every action, or does half, is worse).
NOT_ON_A_NUCLEO = {
    "rgb_led": "the firmware drives one PWM pin per device, so only red would light; wire "
    "three pwm_led devices (red, green, blue) instead, or the LED to a Pi",
    "distance_sensor": "the firmware cannot time an HC-SR04's echo pulse (it would read "
    "0.0 m, an obstacle at the sensor, and never trigger); wire it to a Pi's GPIO",
    "tonal_buzzer": 'the firmware plays no notes; use kind = "buzzer" (on/off) or wire the '
    "passive buzzer to a Pi",
}


def pwm_frequency(config: DeviceConfig) -> int:
    """The PWM frequency the firmware is asked for a level device (servo or pwm_led), Hz."""
    return SERVO_FREQ_HZ if config.spec.detaches else PWM_FREQ_HZ


def check_nucleo_devices(
    board: BoardSpec, wired: Sequence[WiredDevice], source: str = "config.toml"
) -> None:
    """Refuse wiring the firmware cannot carry out (the common checks ran already).

    Raises:
        PinInUse: Two PWM devices on one timer channel (both are named, with the channel), or
            on one timer at different frequencies (named, with pins on other timers).
        ConfigInvalid: A PWM or servo safe value that is not "off"/"on"; a kind the firmware
            cannot carry out (:data:`NOT_ON_A_NUCLEO`, with what to do instead).
    """
    timers: dict[int, WiredDevice] = {}  # timer number -> the first PWM device on it
    channels: dict[str, WiredDevice] = {}
    for dev in wired:
        cfg = dev.config
        if cfg.kind in NOT_ON_A_NUCLEO:
            raise ConfigInvalid(
                f"device {cfg.name!r}: kind {cfg.kind!r} is not supported on a Nucleo: "
                f"{NOT_ON_A_NUCLEO[cfg.kind]}",
                file=source,
                key="kind",
            )
        if cfg.spec.level:
            level_only = cfg.safe == "off" or (cfg.safe == "on" and not cfg.spec.detaches)
            if not level_only:
                raise ConfigInvalid(
                    f"device {cfg.name!r}: on a Nucleo the safe value is a pin level ('off', or "
                    f"'on' for a pwm_led); the board's watchdog cannot hold {cfg.safe!r} "
                    f"on a {cfg.kind}",
                    file=source,
                    key="safe",
                )
            timer = dev.pin.timer
            if timer is not None and timer in channels:
                other = channels[timer]
                raise PinInUse(
                    f"{source}: devices {other.name!r} ({other.pin.header or other.pin.name}) and "
                    f"{cfg.name!r} ({dev.pin.header or dev.pin.name}) both need {timer} on "
                    f"{board.id}: one timer channel carries one PWM signal; move one of them "
                    "to a pin on another channel (`clawseed-edge boards show "
                    f"{board.id}`)"
                )
            if timer is not None:
                channels[timer] = dev
                first = timers.setdefault(timer_channel(timer)[0], dev)
                if pwm_frequency(first.config) != pwm_frequency(cfg):
                    raise PinInUse(_timer_conflict(board, wired, timers, first, dev, source))


def _timer_conflict(
    board: BoardSpec,
    wired: Sequence[WiredDevice],
    timers: dict[int, WiredDevice],
    first: WiredDevice,
    dev: WiredDevice,
    source: str,
) -> str:
    number = timer_channel(dev.pin.timer or "")[0]
    freq = pwm_frequency(dev.config)
    used = {w.pin.name for w in wired}
    # Pins whose timer is free, or already runs at this device's frequency.
    fits = []
    for pin in board.pins:
        if not pin.can("pwm") or pin.timer is None or pin.name in used:
            continue
        other = timer_channel(pin.timer)[0]
        owner = timers.get(other)
        if other != number and (owner is None or pwm_frequency(owner.config) == freq):
            fits.append(f"{pin.header or pin.name} (TIM{other})")
    where = ", ".join(fits) if fits else "none left on this board"

    def named(w: WiredDevice) -> str:
        return f"{w.name!r} ({w.pin.header or w.pin.name}, {pwm_frequency(w.config)} Hz)"

    return (
        f"{source}: devices {named(first)} and {named(dev)} both use timer TIM{number} on "
        f"{board.id}: an STM32 timer runs all its channels at one frequency; move "
        f"{dev.name!r} to a pin on another timer: {where}"
    )


class SerialDevice(PinDevice):
    """One device on a Nucleo pin.

    Attributes:
        wired: The validated configuration and board pin.
        value: The last logical value (0/1, a level, a servo position, None when detached).
    """

    def __init__(self, wired: WiredDevice) -> None:
        super().__init__(wired)
        self.level: float | None = None  # the line: 0/1, or the PWM duty 0..1
        self.frequency: int | None = None  # Hz while the firmware drives PWM on the pin

    def record(self, op: str, args: dict[str, Any], result: Any = None) -> None:
        """Remember the line level a request left on the pin (status and ``[pin]`` lines)."""
        if op == "pwm.set":
            self.level, self.frequency = float(args["duty"]), int(args["freq"])
        elif op == "safe":
            self.level, self.frequency = float(self._safe_bit()), None
        elif "value" in args:  # pin.write, pin.mode out
            self.level, self.frequency = float(args["value"]), None
        elif isinstance(result, dict) and result.get("value") in (0, 1):  # read, mode in
            self.level, self.frequency = float(result["value"]), None

    def _safe_bit(self) -> int:
        cfg = self.wired.config
        return self._bit(cfg.safe == "on" and not cfg.spec.detaches)

    def _bit(self, on: bool) -> int:
        # The pin level for "on"/"off" (a relay board wired active-low inverts it).
        return int(on) if self.wired.config.active_high else int(not on)

    def setup(self, at_safe: bool = False) -> tuple[list[tuple[str, dict[str, Any]]], float | None]:
        """(requests, resulting value) that configure the pin at connect.

        An output is first made an output at its initial level with its safe level registered
        (the firmware's watchdog and ``safe`` use it); a PWM or servo start value follows.
        With ``at_safe`` (an estop) it starts at its safe value instead: never at ``initial``.
        """
        cfg = self.wired.config
        if not self.is_output:
            pull = {True: "up", False: "down", None: None}[cfg.effective_pull_up]
            bounce = cfg.bounce_ms if cfg.bounce_ms is not None else 20
            args = {"pin": self.pin_name, "mode": "in", "pull": pull, "edges": "both"}
            return [("pin.mode", {**args, "bounce_ms": bounce})], None
        initial = self.start_value(at_safe=at_safe)
        on = initial == "on"
        mode = {
            "pin": self.pin_name,
            "mode": "out",
            "value": self._bit(on and not cfg.spec.detaches),
            "safe": self._safe_bit(),
        }
        requests: list[tuple[str, dict[str, Any]]] = [("pin.mode", mode)]
        value: float | None = None if cfg.spec.detaches else float(on)
        if cfg.spec.level and initial != "off":
            level = self.level_of(initial)
            requests.append(self.write_request(level))
            value = level
        return requests, value

    def write_request(self, value: float | None) -> tuple[str, dict[str, Any]]:
        """(op, args) that drive the output to ``value`` (range already checked)."""
        cfg = self.wired.config
        if cfg.spec.detaches:  # a servo: positions -1..1 as min_pulse_us..max_pulse_us
            if value is None:
                return "pin.write", {"pin": self.pin_name, "value": 0}  # detach: no pulses
            # The configured end points, as on a Pi: a servo limited to 1200..1800 us is never
            # driven into its end stops.
            centre = (cfg.min_pulse_us + cfg.max_pulse_us) / 2000
            span = (cfg.max_pulse_us - cfg.min_pulse_us) / 2000
            pulse_ms = centre + value * span
            return "pwm.set", {
                "pin": self.pin_name,
                "freq": SERVO_FREQ_HZ,
                "duty": round(pulse_ms * SERVO_FREQ_HZ / 1000, 6),
            }
        if cfg.spec.level:  # a pwm_led
            level = value or 0.0
            if level <= 0.0:
                return "pin.write", {"pin": self.pin_name, "value": self._bit(False)}
            duty = level if cfg.active_high else 1.0 - level
            return "pwm.set", {"pin": self.pin_name, "freq": PWM_FREQ_HZ, "duty": round(duty, 6)}
        return "pin.write", {"pin": self.pin_name, "value": self._bit(bool(value))}

    def value_of_level(self, level: int) -> float:
        """The logical value of an input (1 active) or switch (1 on) at pin ``level``."""
        if not self.is_output:
            return float(level == (0 if self.wired.config.active_low else 1))
        return float(level == self._bit(True))

    def state(self) -> dict[str, Any]:
        """The device as plain data, with the line level and PWM frequency last set."""
        state = super().state()
        if self.frequency:
            state["mode"] = "pwm"
        return {**state, "level": self.level, "frequency": self.frequency}

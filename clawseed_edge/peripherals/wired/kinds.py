"""Device kinds: one table owns what each kind can do, its value range and its safe value.

Every other module asks a :class:`KindSpec` (``KIND_SPECS[cfg.kind]``) instead of switching on
kind names, so a new kind is one row here (and its gpiozero class), not edits in five places.
"""

from __future__ import annotations

from typing import Literal

import msgspec

__all__ = ["BLINK_LIMITS", "KIND_SPECS", "KindSpec", "blink_out_of_bounds", "kind_spec"]

BLINK_LIMITS = {"count": (1, 20), "on_ms": (20, 5000), "off_ms": (20, 5000)}
"""Bounds of ``blink`` arguments (inclusive)."""


def blink_out_of_bounds(count: int, on_ms: int, off_ms: int) -> str:
    """Why a blink's arguments are out of :data:`BLINK_LIMITS`, or "" when they fit."""
    for key, value in (("count", count), ("on_ms", on_ms), ("off_ms", off_ms)):
        lo, hi = BLINK_LIMITS[key]
        if not lo <= value <= hi:
            return f"{key} {value} is outside {lo}..{hi}"
    return ""


class KindSpec(msgspec.Struct, frozen=True):
    """What a device kind is and may do.

    Attributes:
        name: The kind as written in the config (``pwm_led``).
        direction: ``output`` (the model may write it) or ``input`` (read only).
        needs: Pin capabilities, any one of which the kind needs (``pwm`` or ``pwm_soft``).
        gpiozero_class: The gpiozero class the device is built from.
        switch: It can be switched on/off (``gpio_switch``, ``gpio_toggle``).
        level: It takes a level (``gpio_set_level``); its range comes from ``max_level``.
        blink: It can blink (a relay or a servo must not chatter).
        symmetric: Its range is -cap..cap (a servo), else 0..cap.
        words: How its 1 and 0 read to a person (``on``/``off``, ``pressed``/``released``).
        detaches: "off" means no pulses at all (a servo detaches), not level 0.
        pulses: It is driven by servo pulses (``min_pulse_us``/``max_pulse_us``, angles).
        default_pull_up: For inputs, the pull when ``pull_up`` is unset: True (internal
            pull-up, a ``button`` to ground), or None (no internal pull: an external resistor
            holds the line and ``active_high`` says which level is active).
        tone: It plays notes (``gpio_play_note``); "off" is silence.
        colour: It shows colours (``gpio_set_colour``); its value is its brightest channel.
        extra_pins: Pins it needs besides ``pin``, by name (``pins = {green = .., blue = ..}``).
        extra_needs: What the extra pins need, when it differs from ``needs``.
        unit: Its value is a measurement in this unit (``m``), not on/off.
    """

    name: str
    direction: Literal["output", "input"]
    needs: tuple[str, ...]
    gpiozero_class: str
    switch: bool = False
    level: bool = False
    blink: bool = False
    symmetric: bool = False
    words: tuple[str, str] = ("on", "off")
    detaches: bool = False
    pulses: bool = False
    default_pull_up: bool | None = None
    tone: bool = False
    colour: bool = False
    extra_pins: tuple[str, ...] = ()
    extra_needs: tuple[str, ...] = ()
    unit: str = ""

    @property
    def is_output(self) -> bool:
        return self.direction == "output"

    def value_range(self, max_level: float | None) -> tuple[float, float]:
        """The (min, max) value a write may carry, the configured cap included."""
        if not self.level:
            return (0.0, 1.0)
        cap = 1.0 if max_level is None else max_level
        return (-cap, cap) if self.symmetric else (0.0, cap)

    def describe(self, value: float | None) -> str:
        """A value in words: ``on``, ``pressed``, ``at level 0.4``, ``detached``."""
        if self.tone:
            return self.words[1] if value is None else self.words[0]
        if self.unit:
            return "no reading" if value is None else f"at {value:.2f} {self.unit}"
        if value is None:
            return "detached" if self.detaches else "unknown"
        if self.symmetric:
            return f"at position {value:g}"
        if self.level:
            return "off" if value == 0 else f"at level {value:g}"
        return self.words[0] if value else self.words[1]


_DIGITAL_OUT = ("digital_out",)
_PWM = ("pwm", "pwm_soft")
_DIGITAL_IN = ("digital_in",)

KIND_SPECS: dict[str, KindSpec] = {
    spec.name: spec
    for spec in (
        KindSpec("led", "output", _DIGITAL_OUT, "LED", switch=True, blink=True),
        KindSpec("pwm_led", "output", _PWM, "PWMLED", switch=True, level=True, blink=True),
        # A relay switches mains or motors: no blinking.
        KindSpec("relay", "output", _DIGITAL_OUT, "DigitalOutputDevice", switch=True),
        KindSpec(
            "button",
            "input",
            _DIGITAL_IN,
            "Button",
            words=("pressed", "released"),
            default_pull_up=True,  # gpiozero's Button default: a switch to ground
        ),
        KindSpec(
            "digital_in", "input", _DIGITAL_IN, "DigitalInputDevice", words=("active", "inactive")
        ),
        KindSpec(
            "digital_out", "output", _DIGITAL_OUT, "DigitalOutputDevice", switch=True, blink=True
        ),
        KindSpec("buzzer", "output", _DIGITAL_OUT, "Buzzer", switch=True, blink=True),
        # A servo holds a position: switching it "on" means nothing, "off" detaches it.
        KindSpec(
            "servo",
            "output",
            _PWM,
            "Servo",
            level=True,
            symmetric=True,
            detaches=True,
            pulses=True,
        ),
        # A PIR (HC-SR501): gpiozero's MotionSensor averages samples (queue_len) against
        # the threshold, so one noisy edge does not report motion.
        KindSpec(
            "motion_sensor",
            "input",
            _DIGITAL_IN,
            "MotionSensor",
            words=("detecting motion", "quiet"),
        ),
        # An HC-SR04: ``pin`` is ECHO (through a divider: it is a 5 V signal), ``pins.trigger``
        # TRIG; gpiozero's DistanceSensor times the echo in a thread and smooths the readings.
        KindSpec(
            "distance_sensor",
            "input",
            _DIGITAL_IN,
            "DistanceSensor",
            extra_pins=("trigger",),
            extra_needs=_DIGITAL_OUT,
            unit="m",
        ),
        # A common-cathode RGB LED on three PWM pins: ``pin`` is red, ``pins`` green and blue.
        KindSpec(
            "rgb_led",
            "output",
            _PWM,
            "RGBLED",
            switch=True,
            colour=True,
            extra_pins=("green", "blue"),
        ),
        # A passive buzzer: gpiozero's TonalBuzzer plays a note by PWM frequency; silent is
        # "off" (no pulses), so it has no level and does not blink.
        KindSpec(
            "tonal_buzzer",
            "output",
            _PWM,
            "TonalBuzzer",
            detaches=True,
            tone=True,
            words=("playing a note", "silent"),
        ),
    )
}
"""Every kind the GPIO peripheral knows, in the order the docs list them."""


def kind_spec(kind: str) -> KindSpec:
    """The spec of ``kind`` (the config already restricted it to :data:`KIND_SPECS`)."""
    return KIND_SPECS[kind]

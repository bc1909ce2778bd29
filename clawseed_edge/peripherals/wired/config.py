"""The user's wiring: named devices on pins, validated against the board.

One device config for every backend: a ``[[devices]]`` table means the same on a Pi header
(gpiozero) and on a Nucleo (the firmware), so the kinds, limits and safe values are checked
here once. :func:`validate_devices` checks the devices against a
:class:`~..boards.BoardSpec` and raises api errors whose message names the file, the device and
the problem; a backend adds only what its way of reaching the pins cannot do.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

import msgspec

from clawseed_edge.api import (
    ConfigInvalid,
    PinInUse,
    PinInvalid,
    PinModeUnsupported,
    PinReserved,
)

from ..boards import BoardSpec, PinSpec
from .ha_device_class import ha_class_problem
from .kinds import KIND_SPECS, KindSpec

__all__ = [
    "INPUT_KINDS",
    "KINDS",
    "OUTPUT_KINDS",
    "DeviceConfig",
    "DeviceKind",
    "WiredDevice",
    "Wiring",
    "validate_devices",
]

DeviceKind = Literal[
    "led",
    "pwm_led",
    "relay",
    "button",
    "digital_in",
    "digital_out",
    "buzzer",
    "servo",
    "motion_sensor",
    "distance_sensor",
    "rgb_led",
    "tonal_buzzer",
]
KINDS: tuple[str, ...] = tuple(KIND_SPECS)
OUTPUT_KINDS = frozenset(k for k, spec in KIND_SPECS.items() if spec.is_output)
INPUT_KINDS = frozenset(k for k, spec in KIND_SPECS.items() if not spec.is_output)
_LEVEL_NAMES = " and ".join(k for k, spec in KIND_SPECS.items() if spec.level)
_INPUT_NAMES = ", ".join(k for k, spec in KIND_SPECS.items() if not spec.is_output)


class DeviceConfig(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, frozen=True):
    """One device the user wired to a pin.

    Attributes:
        name: What the user and the model call it; a Python-style identifier (``red_led``).
        pin: The pin: canonical (``GPIO17``), number (``17``), header (``BOARD11``) or alias.
        kind: ``led``, ``pwm_led``, ``relay``, ``button``, ``digital_in``, ``digital_out``,
            ``buzzer``, ``servo``, ``motion_sensor`` (a PIR), ``distance_sensor`` (an HC-SR04:
            ``pin`` is ECHO, ``pins = {trigger = ..}``), ``rgb_led`` (three PWM pins) or
            ``tonal_buzzer`` (a passive buzzer that plays notes).
        pins: The other pins of a multi-pin kind, by name: ``{green = "GPIO6", blue =
            "GPIO13"}`` for an ``rgb_led`` (whose ``pin`` is red).
        description: Free text for the model (``"desk lamp, left of the monitor"``).
        safe: The output's safe value, applied on shutdown and estop: ``"off"``, ``"on"``, or a
            level (0..1 for ``pwm_led``, -1..1 for ``servo``; ``"off"`` detaches a servo).
        initial: The value set at connect; defaults to ``safe``.
        active_high: Whether "on" drives the pin high (``false`` for most relay boards).
        approval: Every write asks the user first, even in ``full`` autonomy.
        max_switches_per_minute: Per-device write rate limit, enforced by the SecurityPolicy.
        max_level: Cap on the PWM level (0..1) or the servo value (0..1 of full travel).
        min_pulse_us: For servos: the pulse width at one end of travel, microseconds
            (default 1000; lgpio sends 500..2500).
        max_pulse_us: For servos: the pulse width at the other end (default 2000).
        min_angle: For servos: the angle at ``min_pulse_us``, degrees; with ``max_angle`` the
            servo's level, safe and initial values are angles (gpiozero's AngularServo).
        max_angle: For servos: the angle at ``max_pulse_us``, degrees.
        pull_up: For inputs: ``true`` internal pull-up, ``false`` internal pull-down; unset:
            a ``button`` uses the internal pull-up (pressed = low), a ``digital_in`` no
            internal pull (an external resistor holds it; ``active_high`` says which level is
            "active"). A pin with a pull fitted on the board (GPIO2/3) refuses any other.
        bounce_ms: For inputs: ignore edges closer than this many milliseconds.
        on_press: For inputs: a message sent to the agent when the input becomes active.
        on_release: For inputs: a message sent to the agent when the input becomes inactive.
        events_per_minute: At most this many rule messages per minute from this device.
        ha_device_class: The class Home Assistant shows it with: for an input one of HA's
            binary-sensor classes (``door``, ``window``, ``moisture`` ...; a ``motion_sensor``
            is ``motion`` by default), for a switch kind ``switch`` (default) or ``outlet``.
    """

    name: str
    pin: str | int
    kind: DeviceKind
    description: str = ""
    safe: Literal["off", "on"] | float = "off"
    initial: Literal["off", "on"] | float | None = None
    active_high: bool = True
    approval: bool = False
    max_switches_per_minute: int | None = None
    max_level: float | None = None
    min_pulse_us: int = 1000
    max_pulse_us: int = 2000
    min_angle: float | None = None
    max_angle: float | None = None
    pull_up: bool | None = None
    bounce_ms: int | None = None
    on_press: str | None = None
    on_release: str | None = None
    events_per_minute: int = 6
    pins: dict[str, str | int] = msgspec.field(default_factory=dict)
    ha_device_class: str | None = None

    @property
    def spec(self) -> KindSpec:
        """What this device's kind can do (:data:`~.kinds.KIND_SPECS`)."""
        return KIND_SPECS[self.kind]

    @property
    def is_output(self) -> bool:
        return self.spec.is_output

    @property
    def is_input(self) -> bool:
        return not self.spec.is_output

    @property
    def effective_pull_up(self) -> bool | None:
        """The input's pull: ``pull_up`` if set, else its kind's default (None: external)."""
        return self.spec.default_pull_up if self.pull_up is None else self.pull_up

    @property
    def active_low(self) -> bool:
        """Whether an input is active at the low level: with a pull-up (a button to ground),
        or, with no internal pull, when ``active_high`` is false. One rule for every backend."""
        pull = self.effective_pull_up
        return not self.active_high if pull is None else pull

    def level_range(self) -> tuple[float, float]:
        """The (min, max) value a write may carry, the cap included (degrees for a servo with
        angles: the cap shrinks the travel around its middle)."""
        lo, hi = self.spec.value_range(self.max_level)
        if self.min_angle is None or self.max_angle is None:
            return (lo, hi)
        return (self.angle_of(lo), self.angle_of(hi))

    def angle_of(self, position: float) -> float:
        """The angle of a servo position (-1..1); the position itself without angles."""
        if self.min_angle is None or self.max_angle is None:
            return position
        mid = (self.min_angle + self.max_angle) / 2
        return mid + position * (self.max_angle - self.min_angle) / 2

    def position_of(self, value: float) -> float:
        """The servo position (-1..1) of a value in config units (an angle, with angles)."""
        if self.min_angle is None or self.max_angle is None:
            return value
        mid = (self.min_angle + self.max_angle) / 2
        return (value - mid) / ((self.max_angle - self.min_angle) / 2)


class Wiring(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, frozen=True):
    """A board and the devices wired to it, whatever backend reaches its pins.

    Attributes:
        board: A board id from the registry (``rpi4b``, ``nucleo-f401re``; ``sim``).
        devices: The wiring.
    """

    board: str = "sim"
    devices: tuple[DeviceConfig, ...] = ()


class WiredDevice(msgspec.Struct, frozen=True):
    """A validated device with the board pin it resolved to."""

    config: DeviceConfig
    pin: PinSpec
    extra: tuple[PinSpec, ...] = ()

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def kind(self) -> str:
        return self.config.kind


def validate_devices(
    board: BoardSpec,
    devices: Sequence[DeviceConfig],
    source: str = "config.toml",
    key: str = "devices",
) -> list[WiredDevice]:
    """Check the wiring against the board and resolve every pin.

    ``key`` is where the devices sit in the file (``devices``, ``peripherals[1].devices``).

    Raises (each message names ``source``, the device and what to do):
        ConfigInvalid: Bad name, duplicate name, value out of range, input option on an output.
        PinInvalid: The board has no such pin.
        PinReserved: The pin is reserved (the reason is given).
        PinInUse: Two devices on one pin.
        PinModeUnsupported: The pin cannot do what the kind needs (PWM, output ...).
    """
    wired: list[WiredDevice] = []
    names: dict[str, int] = {}
    pins: dict[str, str] = {}
    for i, dev in enumerate(devices):
        at = f"{key}[{i}]"
        where = f"{source}: {at} ({dev.name!r})"
        _check_values(dev, source, at)
        if dev.name in names:
            raise ConfigInvalid(
                f"device name {dev.name!r} is already used by {key}[{names[dev.name]}]; "
                "give every device its own name",
                file=source,
                key=f"{at}.name",
            )
        names[dev.name] = i
        try:
            pin = board.lookup(dev.pin)
        except (PinInvalid, PinReserved) as exc:
            raise type(exc)(f"{where}: {exc}") from None
        if pin.name in pins:
            raise PinInUse(
                f"{where}: pin {pin.name} is already used by device {pins[pin.name]!r}; "
                "one pin drives one device"
            )
        needs = dev.spec.needs
        if not any(pin.can(c) for c in needs):
            raise PinModeUnsupported(
                f"{where}: a {dev.kind} needs a pin with {' or '.join(needs)}, and {pin.name} on "
                f"{board.id} has only {', '.join(pin.caps) or 'nothing'}"
                + (f"; pins that can: {', '.join(_pins_with(board, needs))}" if needs else "")
            )
        _check_pull(dev, pin, board, source, at)
        pins[pin.name] = dev.name
        extra = tuple(_extra_pin(board, dev, role, pins, where) for role in dev.spec.extra_pins)
        wired.append(WiredDevice(dev, pin, extra))
    return wired


def _check_pull(dev: DeviceConfig, pin: PinSpec, board: BoardSpec, source: str, at: str) -> None:
    """Refuse an input whose pull fights a resistor fitted on the board (found at load, not at
    connect, where gpiozero would raise PinFixedPull)."""
    if not dev.is_input or pin.fixed_pull is None:
        return
    wanted = {True: "up", False: "down", None: "none"}[dev.effective_pull_up]
    if wanted == pin.fixed_pull:
        return
    asked = "unset" if dev.pull_up is None else str(dev.pull_up).lower()
    fix = "set pull_up = true" if pin.fixed_pull == "up" else "set pull_up = false"
    raise ConfigInvalid(
        f"device {dev.name!r}: {pin.name} on {board.id} has a fixed pull-{pin.fixed_pull} "
        f"resistor on the board, so pull_up = {asked} (pull {wanted}) cannot work; {fix} "
        "or wire the input to a pin without a fixed pull",
        file=source,
        key=f"{at}.pull_up",
    )


def _extra_pin(
    board: BoardSpec, dev: DeviceConfig, role: str, pins: dict[str, str], where: str
) -> PinSpec:
    """Resolve and claim ``dev.pins[role]`` (the green pin of an rgb_led ...)."""
    try:
        pin = board.lookup(dev.pins[role])
    except (PinInvalid, PinReserved) as exc:
        raise type(exc)(f"{where}: pins.{role}: {exc}") from None
    if pin.name in pins:
        raise PinInUse(
            f"{where}: pins.{role} {pin.name} is already used by device {pins[pin.name]!r}; "
            "one pin drives one device"
        )
    needs = dev.spec.extra_needs or dev.spec.needs
    if not any(pin.can(c) for c in needs):
        raise PinModeUnsupported(
            f"{where}: pins.{role} of a {dev.kind} needs {' or '.join(needs)}, and "
            f"{pin.name} has only {', '.join(pin.caps) or 'nothing'}"
        )
    pins[pin.name] = dev.name
    return pin


def _pins_with(board: BoardSpec, needs: tuple[str, ...]) -> list[str]:
    out = []
    for p in board.pins:
        if board.reserved_reason(p.name) is None and any(p.can(c) for c in needs):
            out.append(p.name)
    return out[:12]


def _check_values(dev: DeviceConfig, source: str, key: str) -> None:
    def bad(field: str, message: str) -> ConfigInvalid:
        return ConfigInvalid(f"device {dev.name!r}: {message}", file=source, key=f"{key}.{field}")

    if not dev.name.isidentifier() or len(dev.name) > 40:
        raise bad("name", "a name is letters, digits and '_' (not starting with a digit), <= 40")
    if dev.max_level is not None and not 0.0 < dev.max_level <= 1.0:
        raise bad("max_level", f"max_level {dev.max_level} must be in (0, 1]")
    if dev.max_level is not None and not dev.spec.level:
        raise bad("max_level", f"max_level applies to {_LEVEL_NAMES}, not {dev.kind}")
    if dev.max_switches_per_minute is not None and dev.max_switches_per_minute < 1:
        raise bad("max_switches_per_minute", "must be at least 1 (or left out for no limit)")
    if dev.events_per_minute < 1:
        raise bad("events_per_minute", "must be at least 1")
    if dev.bounce_ms is not None and not 0 <= dev.bounce_ms <= 10_000:
        raise bad("bounce_ms", "must be 0..10000 milliseconds")
    _check_servo(dev, bad)
    if dev.ha_device_class is not None:
        problem = ha_class_problem(dev.kind, dev.is_input, dev.ha_device_class)
        if problem:
            raise bad("ha_device_class", problem)
    wanted, given = set(dev.spec.extra_pins), set(dev.pins)
    if wanted != given:
        need = ", ".join(f'{r} = "GPIO.."' for r in dev.spec.extra_pins)
        raise bad(
            "pins",
            f"a {dev.kind} takes pins = {{{need}}}" if wanted else f"a {dev.kind} has one pin",
        )
    if dev.spec.tone and (dev.safe != "off" or dev.initial not in (None, "off")):
        raise bad("safe", f"a {dev.kind} is silent when safe: safe and initial are 'off'")
    lo, hi = dev.level_range()
    for field in ("safe", "initial"):
        value = getattr(dev, field)
        if isinstance(value, float | int) and not isinstance(value, bool):
            if not dev.spec.level:
                raise bad(field, f"a numeric {field} applies to {_LEVEL_NAMES}; use 'on'/'off'")
            if not lo <= value <= hi:
                raise bad(field, f"{field} {value} is outside the allowed range {lo:g}..{hi:g}")
    if dev.is_input:
        if dev.safe != "off" or dev.initial is not None:
            raise bad("safe", f"{dev.kind} is an input: it has no safe or initial value")
        if dev.approval or dev.max_switches_per_minute is not None:
            raise bad(
                "approval", f"{dev.kind} is an input: approval/switch limits apply to outputs"
            )
    else:
        for field in ("pull_up", "bounce_ms", "on_press", "on_release"):
            if getattr(dev, field) is not None:
                raise bad(field, f"{field} applies to inputs ({_INPUT_NAMES}), not {dev.kind}")


def _check_servo(dev: DeviceConfig, bad: Callable[[str, str], ConfigInvalid]) -> None:
    servo_keys = ("min_pulse_us", "max_pulse_us", "min_angle", "max_angle")
    if not dev.spec.pulses:
        defaults = {"min_pulse_us": 1000, "max_pulse_us": 2000}
        for field in servo_keys:
            if getattr(dev, field) != defaults.get(field):
                raise bad(field, f"{field} applies to servos, not {dev.kind}")
        return
    for field in ("min_pulse_us", "max_pulse_us"):
        if not 500 <= getattr(dev, field) <= 2500:
            raise bad(field, f"{field} must be 500..2500 microseconds (what lgpio can send)")
    if dev.min_pulse_us >= dev.max_pulse_us:
        raise bad("max_pulse_us", "max_pulse_us must be greater than min_pulse_us")
    if (dev.min_angle is None) != (dev.max_angle is None):
        raise bad("max_angle", "set both min_angle and max_angle (or neither)")
    if dev.min_angle is not None and dev.max_angle is not None:
        if dev.min_angle >= dev.max_angle:
            raise bad(
                "max_angle",
                "max_angle must be greater than min_angle",
            )

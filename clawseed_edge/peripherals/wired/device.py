"""``PinDevice``: one configured device on a board pin, whatever backend drives the pin.

What a device's value means (a switch's 0/1, a PWM level up to its cap, a servo's position or
angle, an input's active/inactive), its start and safe values and its line in the prompt are
the same on every board; a backend subclass adds only how the value reaches the pin (gpiozero
devices on the Pi, firmware requests on a Nucleo).
"""

from __future__ import annotations

from typing import Any

from clawseed_edge.api import ToolArgumentsInvalid

from .config import DeviceConfig, WiredDevice
from .kinds import KindSpec

__all__ = ["PinDevice"]


class PinDevice:
    """A configured device on a pin.

    Attributes:
        wired: The validated configuration and board pin.
        value: The last value written or read: 0/1 for switches, 0..cap for ``pwm_led``, the
            position (or angle) for ``servo`` (None when detached), 0/1 for inputs.
    """

    def __init__(self, wired: WiredDevice) -> None:
        self.wired = wired
        self.value: float | None = None

    @property
    def name(self) -> str:
        return self.wired.config.name

    @property
    def kind(self) -> str:
        return self.wired.config.kind

    @property
    def pin_name(self) -> str:
        return self.wired.pin.name

    @property
    def spec(self) -> KindSpec:
        """What the device's kind can do."""
        return self.wired.config.spec

    @property
    def config(self) -> DeviceConfig:
        """The device's configuration."""
        return self.wired.config

    @property
    def is_output(self) -> bool:
        return self.spec.is_output

    def on_value(self) -> float:
        """The value "on" means: 1, or a level device's cap."""
        return self.wired.config.level_range()[1]

    def check_level(self, level: float) -> None:
        """Raise ToolArgumentsInvalid (naming the range) if ``level`` is outside the device's."""
        lo, hi = self.wired.config.level_range()
        if not lo <= level <= hi:
            raise ToolArgumentsInvalid(
                f"level {level:g} is outside {self.name}'s allowed range {lo:g}..{hi:g}"
            )

    def level_of(self, value: object) -> float:
        """A config value (``"on"``, ``"off"``, a number) as a level in config units."""
        if value == "on":
            return self.on_value()
        if value == "off" or value is None:
            return 0.0
        assert isinstance(value, int | float)
        return float(value)

    def start_value(self, *, at_safe: bool = False) -> Any:
        """The config value an output starts at: ``initial``, else (or with ``at_safe``: an
        emergency stop must never pass through a value that is not safe) ``safe``."""
        cfg = self.wired.config
        return cfg.safe if at_safe or cfg.initial is None else cfg.initial

    def safe_value(self) -> float | None:
        """The value the safe state leaves (None: a servo or tonal buzzer with no pulses)."""
        safe = self.wired.config.safe
        if self.spec.detaches and safe == "off":
            return None
        return self.level_of(safe)

    def describe(self) -> str:
        """The device's line in the system prompt: kind, pin, limits, safe value."""
        cfg = self.wired.config
        pin = self.wired.pin
        header = f", header {pin.header}" if pin.header else ""
        parts = [f"- {cfg.name}: {cfg.kind} on {pin.name}{header}"]
        if cfg.description:
            parts.append(cfg.description)
        if self.spec.level:
            lo, hi = cfg.level_range()
            parts.append(f"level {lo:g}..{hi:g}")
        if cfg.approval:
            parts.append("every change asks the user first")
        if cfg.max_switches_per_minute:
            parts.append(f"at most {cfg.max_switches_per_minute} switches per minute")
        parts.append(f"safe value {cfg.safe}" if self.is_output else "input (read only)")
        return "; ".join(parts)

    def state(self) -> dict[str, Any]:
        """The device as plain data (a backend adds what its pins can tell)."""
        state = {
            "pin": self.pin_name,
            "device": self.name,
            "kind": self.kind,
            "mode": "output" if self.is_output else "input",
            "value": self.value,
        }
        if self.spec.level:
            # The range a write may carry, the configured cap included (a slider stops there).
            state["min"], state["max"] = self.spec.value_range(self.config.max_level)
        return state

"""A fake ``lgpio`` module that records every call in order, for gpiozero's real LGPIOFactory.

It keeps the level and mode of each line the way the kernel would (a claim as output sets the
level it is given, a write changes it, a claim as input lets it float), so a test can ask what
a line went through: ``fake.levels(23)`` is every level GPIO23 was driven to, in order.

:func:`install` puts it in ``sys.modules`` (gpiozero's lgpio module is re-imported on top of it)
and makes gpiozero believe it runs on a Pi 4 B.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from typing import Any

import pytest

PI4B_REVISION = 0xC03111

GPIO_IS_OUT = 1 << 1
GPIO_IS_BIAS_PULL_UP = 1 << 5
GPIO_IS_BIAS_PULL_DOWN = 1 << 6


class FakeLgpio(types.ModuleType):
    """The module object; its functions append ``(name, gpio, *args)`` to :attr:`calls`."""

    SET_ACTIVE_LOW = 4
    SET_OPEN_DRAIN = 8
    SET_OPEN_SOURCE = 16
    SET_PULL_UP = SET_BIAS_PULL_UP = 32
    SET_PULL_DOWN = SET_BIAS_PULL_DOWN = 64
    SET_PULL_NONE = SET_BIAS_DISABLE = 128
    RISING_EDGE = 1
    FALLING_EDGE = 2
    BOTH_EDGES = 3

    class error(Exception):  # lgpio's own (lower-case) name
        pass

    def __init__(self) -> None:
        super().__init__("lgpio")
        self.calls: list[tuple[Any, ...]] = []
        self.level: dict[int, int] = {}
        self.output: dict[int, bool] = {}
        self.flags: dict[int, int] = {}
        #: gpio -> the function gpiozero registered for its edges (lgpio's alert callback).
        self.alerts: dict[int, Callable[..., None]] = {}

    # --- what a test asks ---------------------------------------------------------------------

    def calls_for(self, gpio: int) -> list[tuple[Any, ...]]:
        """Every call that named ``gpio``, in order."""
        return [c for c in self.calls if len(c) > 1 and c[1] == gpio]

    def levels(self, gpio: int) -> list[int]:
        """Every level ``gpio`` was driven to as an output, in order (claims and writes)."""
        out: list[int] = []
        for call in self.calls_for(gpio):
            if call[0] in ("gpio_claim_output", "gpio_write"):
                out.append(int(bool(call[2])))
        return out

    def edge(self, gpio: int, level: int, tick_ns: int = 0) -> None:
        """What lgpio's alert thread does on an edge: the line's new level, then the callback."""
        self.level[gpio] = level
        self.flags[gpio] = self.flags.get(gpio, 0) & ~(self.SET_PULL_UP | self.SET_PULL_DOWN)
        self.alerts[gpio](7, gpio, level, tick_ns)

    # --- lgpio's API as gpiozero uses it ------------------------------------------------------

    def gpiochip_open(self, chip: int) -> int:
        self.calls.append(("gpiochip_open", None, chip))
        return 7

    def gpiochip_close(self, handle: int) -> int:
        self.calls.append(("gpiochip_close", None))
        return 0

    def gpio_claim_input(self, handle: int, gpio: int, flags: int = 0) -> int:
        self.calls.append(("gpio_claim_input", gpio, flags))
        self.output[gpio] = False
        self.flags[gpio] = flags
        return 0

    def gpio_claim_output(self, handle: int, gpio: int, level: int = 0, flags: int = 0) -> int:
        self.calls.append(("gpio_claim_output", gpio, level))
        self.output[gpio] = True
        self.level[gpio] = int(bool(level))
        return 0

    def gpio_free(self, handle: int, gpio: int) -> int:
        self.calls.append(("gpio_free", gpio))
        self.output[gpio] = False
        return 0

    def gpio_read(self, handle: int, gpio: int) -> int:
        if self.output.get(gpio):
            return self.level.get(gpio, 0)
        # An input reads its pull (no pull: the board's resistor; these tests say low).
        return 1 if self.flags.get(gpio, 0) & self.SET_PULL_UP else self.level.get(gpio, 0)

    def gpio_write(self, handle: int, gpio: int, level: int) -> int:
        self.calls.append(("gpio_write", gpio, level))
        if not self.output.get(gpio):
            raise self.error("GPIO not an output")
        self.level[gpio] = int(bool(level))
        return 0

    def gpio_get_mode(self, handle: int, gpio: int) -> int:
        mode = GPIO_IS_OUT if self.output.get(gpio) else 0
        flags = self.flags.get(gpio, 0)
        if flags & self.SET_PULL_UP:
            mode |= GPIO_IS_BIAS_PULL_UP
        if flags & self.SET_PULL_DOWN:
            mode |= GPIO_IS_BIAS_PULL_DOWN
        return mode

    def tx_pwm(self, handle: int, gpio: int, freq: float, duty: float, *rest: int) -> int:
        self.calls.append(("tx_pwm", gpio, freq, duty))
        return 0

    def tx_servo(self, handle: int, gpio: int, width_us: int, freq: int = 50, *rest: int) -> int:
        self.calls.append(("tx_servo", gpio, width_us, freq))
        return 0

    def gpio_set_debounce_micros(self, handle: int, gpio: int, micros: int) -> int:
        self.calls.append(("gpio_set_debounce_micros", gpio, micros))
        return 0

    def gpio_claim_alert(
        self, handle: int, gpio: int, edges: int, flags: int = 0, notify: int = -1
    ) -> int:
        self.calls.append(("gpio_claim_alert", gpio, edges, flags))
        self.output[gpio] = False
        self.flags[gpio] = flags
        return 0

    def callback(self, handle: int, gpio: int, edge: int, func: Callable[..., None]) -> Any:
        self.calls.append(("callback", gpio, edge))
        self.alerts[gpio] = func
        return types.SimpleNamespace(cancel=lambda: self.calls.append(("cancel", gpio)))


def install(monkeypatch: pytest.MonkeyPatch) -> FakeLgpio:
    """Put a fresh fake in ``sys.modules`` under gpiozero's real lgpio pin factory."""
    fake = FakeLgpio()
    monkeypatch.setitem(sys.modules, "lgpio", fake)
    # gpiozero's lgpio module binds the lgpio it imported: import it again, on the fake.
    monkeypatch.delitem(sys.modules, "gpiozero.pins.lgpio", raising=False)
    monkeypatch.setattr("gpiozero.pins.local.get_pi_revision", lambda: PI4B_REVISION)
    return fake

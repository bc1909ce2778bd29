"""The pin factory, chosen once per process from config or ``--sim``.

Every gpiozero device we create gets ``pin_factory=`` explicitly; gpiozero's global
``Device.pin_factory`` is never read or set, so a test's MockFactory and a real LGPIOFactory never
mix. On a real board we never fall back to mock pins silently: a relay that "switched" in a
simulation the user did not ask for is worse than an error.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from clawseed_edge.api import BoardNotFound, HardwareError, PinFactoryUnavailable

__all__ = ["PinFactoryKind", "make_pin_factory", "mock_echo_pins", "mock_pin_factory"]

PinFactoryKind = Literal["auto", "lgpio", "mock"]


def mock_pin_factory() -> Any:
    """A fresh gpiozero ``MockFactory`` whose pins all support PWM (``MockPWMPin``).

    Its board info is a 40-pin Pi, so every ``GPIOn`` of the ``sim`` board exists on it.
    """
    from gpiozero.pins.mock import MockFactory, MockPWMPin

    return MockFactory(pin_class=MockPWMPin)


SPEED_OF_SOUND_M_S = 343.26  # gpiozero's DistanceSensor uses the same figure (dry air, 20 C)


def mock_echo_pins(factory: Any, echo: str, trigger: str, distance_m: float = 0.5) -> Any:
    """Wire ``trigger`` to ``echo`` on a MockFactory as an HC-SR04 would: a pulse on the trigger
    makes the echo pin high for the sound's round trip to an object ``distance_m`` away.

    Returns the trigger pin; set its ``echo_time`` (seconds) to move the object. The echo is
    timed by real threads, so a simulated distance is approximate (a few cm).
    """
    from gpiozero.pins.mock import MockPWMPin, MockTriggerPin

    class MockPWMTriggerPin(MockTriggerPin, MockPWMPin):  # type: ignore[misc]
        """A trigger pin of the factory's PWM pin class (the factory refuses mixing them)."""

    echo_pin = factory.pin(echo)
    return factory.pin(
        trigger,
        pin_class=MockPWMTriggerPin,
        echo_pin=echo_pin,
        echo_time=2 * distance_m / SPEED_OF_SOUND_M_S,
    )


def make_pin_factory(kind: PinFactoryKind = "auto", sim: bool = False) -> Any:
    """The gpiozero pin factory for this process.

    Args:
        kind: ``mock`` (always mock pins), ``lgpio`` (always real pins) or ``auto``: mock pins
            when ``sim`` is true, lgpio otherwise.
        sim: The process runs in simulation (``--sim`` or the ``sim`` board).

    Raises:
        HardwareError: ``lgpio`` was asked for together with ``sim``.
        PinFactoryUnavailable: lgpio is not installed (an ImportError), or cannot make its
            notification FIFO; the message says what to do, and that ``--sim`` runs without
            hardware.
        BoardNotFound: No GPIO chip can be opened; the message says what to check.
    """
    if kind == "mock" or (kind == "auto" and sim):
        return mock_pin_factory()
    if sim:
        raise HardwareError(
            "pin_factory = 'lgpio' cannot run in simulation; use 'auto' or 'mock' with --sim"
        )
    factory_class = _lgpio_factory_class()
    try:
        return factory_class()
    except Exception as exc:  # lgpio raises its own error type (lgpio.error) or OSError
        raise BoardNotFound(
            f"cannot open the GPIO chip through lgpio ({exc}); check that this is a Raspberry "
            "Pi, that /dev/gpiochip* exists and that the user is in the 'gpio' group; "
            "pass --sim to run on simulated pins"
        ) from exc


LG_WD = "LG_WD"
"""lgpio's working directory variable: where it makes its notification FIFO (``.lgd-nfy*``)."""


def lgpio_work_dir() -> Path:
    """Where lgpio may make its FIFO: ``$LG_WD`` if set, else ``$CLAWSEED_HOME/run``.

    Without it lgpio uses the current directory, which a service or a user in a read-only
    directory cannot write.
    """
    from ..estop_handshake import clawseed_home

    value = os.environ.get(LG_WD)
    return Path(value) if value else clawseed_home() / "run"


@contextlib.contextmanager
def _lgpio_import_dir() -> Iterator[Path]:
    # lgpio, when first imported, makes its FIFO in $LG_WD (else the cwd), chdirs the whole
    # process there, and its Python half opens the FIFO by a relative name. Point it at a
    # directory we own, then give the process its own cwd back.
    work = lgpio_work_dir()
    cwd = os.getcwd()
    previous = os.environ.get(LG_WD)
    with contextlib.suppress(OSError):  # if this fails, the import says so below
        work.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.environ[LG_WD] = str(work)
    try:
        yield work
    finally:
        if previous is None:
            os.environ.pop(LG_WD, None)
        with contextlib.suppress(OSError):
            os.chdir(cwd)


def _import_lgpio_factory() -> tuple[Any, Any, Any]:
    """(lgpio, LGPIOFactory, LGPIOPin), imported with the FIFO in a writable directory."""
    with _lgpio_import_dir() as work:
        try:
            import lgpio
            from gpiozero.pins.lgpio import LGPIOFactory, LGPIOPin
        except ImportError as exc:
            raise PinFactoryUnavailable(
                "the lgpio library is not installed: on a Raspberry Pi run "
                "`pip install 'clawseed-edge[pi]'` (or `apt install python3-lgpio`); "
                "elsewhere pass --sim to run on simulated pins"
            ) from exc
        except OSError as exc:
            raise PinFactoryUnavailable(
                f"lgpio could not make its notification FIFO in {work} "
                f"({exc.strerror or exc}); set {LG_WD} (or CLAWSEED_HOME) to a directory "
                "this user can write"
            ) from exc
    return lgpio, LGPIOFactory, LGPIOPin


def _lgpio_factory_class() -> Any:
    """gpiozero's LGPIOFactory with :class:`SafeClaimPin`-style pins (built on first use, so
    importing this module never imports lgpio)."""
    lgpio, LGPIOFactory, LGPIOPin = _import_lgpio_factory()

    class SafeClaimLGPIOPin(LGPIOPin):  # type: ignore[misc, valid-type]
        """An lgpio pin that becomes an output at a chosen level in one claim.

        gpiozero claims an output at level 0 and then writes the initial state, so an
        active-low relay closed for a moment at every start; lgpio's claim takes the level.
        """

        _callback: Any
        _pwm: Any
        _servo = False

        def use_servo_pulses(self) -> None:
            """Send this pin's PWM as servo pulses: lgpio's ``tx_servo`` takes the width in
            microseconds, where gpiozero's ``tx_pwm`` path rounds the duty to whole percent
            (200 µs steps at 50 Hz)."""
            self._servo = True

        def close(self) -> None:
            # gpiozero keeps pin objects between devices: the next one may not be a servo.
            self._servo = False
            super().close()

        def _set_state(self, value: Any) -> None:
            if not self._pwm:
                super()._set_state(value)
                return
            freq = self._pwm[0]
            if self._servo:
                width_us = round(float(value) * 1_000_000 / freq)
                lgpio.tx_servo(self.factory._handle, self._number, width_us, freq)
            else:
                # A float duty: lgpio times it in microseconds, gpiozero's int() does not.
                lgpio.tx_pwm(self.factory._handle, self._number, freq, float(value) * 100)
            self._pwm = (freq, float(value) * 100)

        def output_with_state(self, state: Any) -> None:
            self._claim_output(1 if state else 0)

        def _set_function(self, value: str) -> None:
            if value == "output":
                # No state given: keep the level the line has (a relay board's pull-up keeps
                # an active-low relay off) instead of pulling it low.
                self._claim_output(lgpio.gpio_read(self.factory._handle, self._number))
            else:
                super()._set_function(value)

        def _claim_output(self, level: int) -> None:
            if self._callback is not None:
                self._callback.cancel()
                self._callback = None
            lgpio.gpio_claim_output(self.factory._handle, self._number, level)

        def _set_frequency(self, value: Any) -> None:
            if self._servo:
                self._set_servo_frequency(value)
                return
            if not self._pwm and value:
                # gpiozero starts PWM at duty 0 (line low: an active-low load fully on); start
                # at the level the line holds instead, the device then sets its value.
                if self.function != "output":
                    super()._set_frequency(value)  # gpiozero's own error
                    return
                duty = 100 * lgpio.gpio_read(self.factory._handle, self._number)
                lgpio.tx_pwm(self.factory._handle, self._number, value, duty)
                self._pwm = (value, duty)
                return
            super()._set_frequency(value)

        def _set_servo_frequency(self, value: Any) -> None:
            if value:
                # No pulse until the servo sets its position (a 0 % or 100 % frame would
                # drive it to an end stop).
                self._pwm = (value, self._pwm[1] if self._pwm else 0.0)
            elif self._pwm:
                lgpio.tx_servo(self.factory._handle, self._number, 0)  # width 0: stop pulses
                self._pwm = None

    class SafeClaimLGPIOFactory(LGPIOFactory):  # type: ignore[misc, valid-type]
        """LGPIOFactory whose pins claim outputs at their initial level."""

        def __init__(self, chip: int | None = None) -> None:
            super().__init__(chip)
            self.pin_class = SafeClaimLGPIOPin

    return SafeClaimLGPIOFactory

"""The pin factory, chosen once per process from config or ``--sim``.

Every gpiozero device we create gets ``pin_factory=`` explicitly; gpiozero's global
``Device.pin_factory`` is never read or set, so a test's MockFactory and a real LGPIOFactory never
mix. On a real board we never fall back to mock pins silently: a relay that "switched" in a
simulation the user did not ask for is worse than an error.
"""

from __future__ import annotations

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
        PinFactoryUnavailable: lgpio is not installed (an ImportError); the message says what
            to install, and that ``--sim`` runs without hardware.
        BoardNotFound: No GPIO chip can be opened; the message says what to check.
    """
    if kind == "mock" or (kind == "auto" and sim):
        return mock_pin_factory()
    if sim:
        raise HardwareError(
            "pin_factory = 'lgpio' cannot run in simulation; use 'auto' or 'mock' with --sim"
        )
    try:
        from gpiozero.pins.lgpio import LGPIOFactory
    except ImportError as exc:
        raise PinFactoryUnavailable(
            "the lgpio library is not installed: on a Raspberry Pi run "
            "`pip install 'clawseed-edge[pi]'` (or `apt install python3-lgpio`); "
            "elsewhere pass --sim to run on simulated pins"
        ) from exc
    try:
        return LGPIOFactory()
    except Exception as exc:  # lgpio raises its own error type (lgpio.error) or OSError
        raise BoardNotFound(
            f"cannot open the GPIO chip through lgpio ({exc}); check that this is a Raspberry "
            "Pi, that /dev/gpiochip* exists and that the user is in the 'gpio' group; "
            "pass --sim to run on simulated pins"
        ) from exc

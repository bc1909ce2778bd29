from __future__ import annotations

import sys

import pytest

from clawseed_edge.api import HardwareError, PinFactoryUnavailable
from clawseed_edge.peripherals.gpio import make_pin_factory


def test_mock_with_sim_and_pwm_pins() -> None:
    from gpiozero.pins.mock import MockFactory, MockPWMPin

    for factory in (make_pin_factory("auto", sim=True), make_pin_factory("mock")):
        assert isinstance(factory, MockFactory) and factory.pin_class is MockPWMPin
        factory.close()


def test_lgpio_in_simulation_is_refused() -> None:
    with pytest.raises(HardwareError, match="cannot run in simulation"):
        make_pin_factory("lgpio", sim=True)


def test_auto_on_hardware_never_falls_back_to_mock(monkeypatch: pytest.MonkeyPatch) -> None:
    # Without lgpio (this machine), "auto" outside simulation is an error that says what to do.
    monkeypatch.setitem(sys.modules, "gpiozero.pins.lgpio", None)
    with pytest.raises(PinFactoryUnavailable, match=r"clawseed-edge\[pi\].*--sim"):
        make_pin_factory("auto", sim=False)
    try:
        make_pin_factory("lgpio", sim=False)
    except ImportError as exc:  # the leaf is an ImportError too: callers may catch that
        assert isinstance(exc, PinFactoryUnavailable)
    else:
        pytest.fail("lgpio without the library must raise")

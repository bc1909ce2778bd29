"""set_sensor: what `sim set` does, for users' own tests."""

from __future__ import annotations

import pytest

from clawseed_edge.api import DeviceNotFound, HardwareError, ToolArgumentsInvalid
from clawseed_edge.testing.sensors import set_sensor, sim_sensor_bank

WIRING = '[[sensors]]\nname = "greenhouse"\ndriver = "sht31"\n'


async def test_set_sensor_changes_the_next_reading() -> None:
    async with sim_sensor_bank(WIRING) as bank:
        set_sensor(bank, "greenhouse.temperature", 31.5)
        reading = await bank.read("greenhouse")
    assert reading.values["temperature"] == pytest.approx(31.5, abs=0.05)


@pytest.mark.parametrize(
    ("target", "value", "error", "message"),
    [
        ("greenhouse", 1.0, ToolArgumentsInvalid, "write SENSOR.QUANTITY"),
        ("greenhouse.pressure", 1.0, ToolArgumentsInvalid, "measures temperature, humidity"),
        ("greenhouse.temperature", float("nan"), ToolArgumentsInvalid, "not a finite number"),
        ("porch.temperature", 1.0, DeviceNotFound, "no sensor or display named 'porch'"),
    ],
)
async def test_set_sensor_says_what_is_wrong(
    target: str, value: float, error: type[Exception], message: str
) -> None:
    async with sim_sensor_bank(WIRING) as bank:
        with pytest.raises(error, match=message):
            set_sensor(bank, target, value)


async def test_real_hardware_is_never_set() -> None:
    from clawseed_edge.peripherals.sensors.bank import SensorBank

    valid = sim_sensor_bank(WIRING).sensor("greenhouse")
    bank = SensorBank([valid], sim=False)  # not connected: nothing is opened
    with pytest.raises(HardwareError, match="runs on real hardware, not simulated"):
        bank.sim_set("greenhouse.temperature", 1.0)

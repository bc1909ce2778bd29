"""Drivers from the clawseed_edge.sensors entry-point group run like the built-ins, their
simulated model included."""

from __future__ import annotations

from importlib.metadata import EntryPoint
from typing import Any, ClassVar

import pytest

from clawseed_edge.api import ConfigInvalid
from clawseed_edge.api import plugins as registry_module  # entry points are read there
from clawseed_edge.peripherals.i2c.sim import RegisterChipModel
from clawseed_edge.peripherals.sensors import Quantity, check_values
from clawseed_edge.peripherals.sensors.registry import ENTRY_POINT_GROUP, default_driver_registry
from clawseed_edge.testing.sensors import sim_sensor_bank


class SoilModel(RegisterChipModel):
    """A made-up chip: register 0x10 holds moisture in percent."""

    def set(self, **values: float) -> None:
        self.registers[0x10] = round(values["moisture"])


class SoilChip:
    driver_name: ClassVar[str] = "soilchip"
    transport: ClassVar[str] = "i2c"
    addresses: ClassVar[tuple[int, ...]] = (0x36,)
    quantities: ClassVar[tuple[Quantity, ...]] = (Quantity("moisture", "%", 0, 100, 0),)
    min_interval_s: ClassVar[float] = 0.0
    summary: ClassVar[str] = "a plugin's soil moisture chip"
    sim_model: ClassVar[str] = f"{__name__}:SoilModel"

    def __init__(self, bus: Any, address: int) -> None:
        self.bus, self.address = bus, address

    def setup(self) -> None:
        pass

    def read(self) -> dict[str, float]:
        value = self.bus.read_byte_data(self.address, 0x10)
        return check_values(self.driver_name, self.quantities, {"moisture": value})


@pytest.fixture
def plugin(monkeypatch: pytest.MonkeyPatch) -> None:
    ep = EntryPoint("soilchip", f"{__name__}:SoilChip", ENTRY_POINT_GROUP)

    def fake_entry_points(*, group: str) -> list[EntryPoint]:
        return [ep] if group == ENTRY_POINT_GROUP else []

    monkeypatch.setattr(registry_module, "entry_points", fake_entry_points)


async def test_a_plugin_driver_reads_through_its_simulated_model(plugin: None) -> None:
    bank = sim_sensor_bank('[[sensors]]\nname = "bed"\ndriver = "soilchip"\n')
    async with bank:
        bank.sim.sensor("bed").set(moisture=37)
        reading = await bank.read("bed")
    assert reading.format_value("moisture") == "37 %"
    assert "soilchip" in default_driver_registry().names()


def test_a_plugin_that_does_not_import_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    ep = EntryPoint("broken", "no_such_package.mod:Chip", ENTRY_POINT_GROUP)
    monkeypatch.setattr(registry_module, "entry_points", lambda *, group: [ep])
    with pytest.raises(
        ConfigInvalid,
        match=r"sensor driver plugin 'broken' \(no_such_package.mod:Chip, from .*\) failed to load",
    ):
        default_driver_registry().get("broken")


def test_aliases_resolve_to_the_built_in_driver() -> None:
    registry = default_driver_registry()
    assert registry.get("sht35") is registry.get("sht31")
    assert registry.get("am2302").driver_name == "dht22"

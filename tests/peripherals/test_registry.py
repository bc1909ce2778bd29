"""Peripheral factories by type: built-ins, entry-point plugins, table validation."""

from __future__ import annotations

from collections.abc import Sequence
from importlib.metadata import EntryPoint
from typing import Any

import msgspec
import pytest

from clawseed_edge.api import ConfigInvalid, HealthStatus, Peripheral, Tool
from clawseed_edge.api import plugins as registry_module  # entry points are read there
from clawseed_edge.peripherals.registry import (
    ENTRY_POINT_GROUP,
    PeripheralFactoryRegistry,
    default_registry,
)


class PsuSettings(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, frozen=True):
    name: str
    type: str
    volts: float = 5.0


class BenchPsu:
    """A third-party peripheral with no pins at all."""

    def __init__(self, settings: PsuSettings) -> None:
        self.name = settings.name
        self.board_type = "bench_psu"
        self.volts = settings.volts

    async def connect(self) -> None:
        return None

    async def disconnect(self) -> None:
        return None

    async def health_check(self) -> HealthStatus:
        return HealthStatus(True, "ok")

    async def apply_safe_state(self) -> None:
        return None

    def describe(self) -> str:
        return "a bench power supply"

    def tools(self) -> Sequence[Tool]:
        return []


class PsuFactory:
    settings = PsuSettings

    def create(self, settings: PsuSettings, *, sim: bool, source: str, key: str) -> Peripheral:
        return BenchPsu(settings)

    def devices(self, settings: PsuSettings) -> Sequence[str]:
        return []


PLUGIN = PsuFactory()


def test_pi_gpio_is_built_in_and_entry_points_are_not_scanned_for_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    looked_up: list[str] = []
    monkeypatch.setattr(
        registry_module, "entry_points", lambda group: looked_up.append(group) or []
    )
    registry = default_registry()
    table = registry.parse(
        {"name": "bench", "type": "pi_gpio", "board": "sim"}, source="c.toml", index=0
    )
    assert (table.name, table.type, table.key) == ("bench", "pi_gpio", "peripherals[0]")
    assert looked_up == []


def test_a_plugin_type_loads_from_the_entry_point_group(monkeypatch: pytest.MonkeyPatch) -> None:
    looked_up: list[str] = []

    def fake_entry_points(group: str) -> list[EntryPoint]:
        looked_up.append(group)
        return [EntryPoint("bench_psu", f"{__name__}:PLUGIN", group)]

    monkeypatch.setattr(registry_module, "entry_points", fake_entry_points)
    registry = default_registry()
    table = registry.parse(
        {"name": "psu", "type": "bench_psu", "volts": 12}, source="c.toml", index=2
    )
    peripheral: Any = table.create(source="c.toml")
    assert isinstance(peripheral, BenchPsu) and peripheral.volts == 12
    assert isinstance(peripheral, Peripheral)
    assert looked_up == [ENTRY_POINT_GROUP]
    registry.parse({"name": "psu2", "type": "bench_psu"}, source="c.toml", index=3)
    assert looked_up == [ENTRY_POINT_GROUP]  # cached after the first load


def test_a_broken_plugin_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        registry_module,
        "entry_points",
        lambda group: [EntryPoint("broken", "no_such_module_xyz:factory", group)],
    )
    with pytest.raises(ConfigInvalid, match=r"plugin 'broken'.*failed to load") as info:
        default_registry().parse({"name": "b", "type": "broken"}, source="c.toml", index=0)
    assert info.value.key == "peripherals[0].type"


def test_an_application_registers_its_own_type() -> None:
    registry = PeripheralFactoryRegistry(load_entry_points=False)
    registry.register("bench_psu", PLUGIN)
    assert registry.names() == ["bench_psu"] and "bench_psu" in registry
    with pytest.raises(ConfigInvalid, match=r"unknown peripheral type 'pi_gpio'"):
        registry.parse({"name": "x", "type": "pi_gpio"}, source="c.toml", index=0)
    with pytest.raises(ConfigInvalid, match=r"needs a type") as info:
        registry.parse({"name": "x"}, source="c.toml", index=1)
    assert info.value.key == "peripherals[1].type"

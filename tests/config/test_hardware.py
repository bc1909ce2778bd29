"""The hardware part of a config: [hardware] + [[devices]], [[peripherals]], checks at load."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from clawseed_edge.api import ConfigInvalid, PinInvalid
from clawseed_edge.config.file import load_config
from clawseed_edge.config.hardware import build_peripherals
from clawseed_edge.peripherals import PiGpio

HEADER = '[[peripherals]]\nname = "{name}"\ntype = "pi_gpio"\nboard = "sim"\n'
DEVICE = '[[peripherals.devices]]\nname = "{name}"\npin = "{pin}"\nkind = "led"\n'


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_devices_without_a_board_is_an_error_that_says_what_to_set(tmp_path: Path) -> None:
    path = write(tmp_path, '[[devices]]\nname = "led"\npin = "GPIO17"\nkind = "led"\n')
    with pytest.raises(ConfigInvalid) as info:
        load_config(path)
    assert info.value.key == "hardware.board"
    assert str(info.value).startswith(f"{path}: hardware.board: [[devices]] are wired")
    assert '"sim"' in str(info.value) and "rpi4b" in str(info.value)


def test_no_devices_needs_no_board(tmp_path: Path) -> None:
    loaded = load_config(write(tmp_path, '[autonomy]\nlevel = "full"\n'))
    assert build_peripherals(loaded.config, loaded.source) == []


def test_the_embedded_default_keeps_loading() -> None:
    loaded = load_config(None)
    pi, sensors = build_peripherals(loaded.config, loaded.source)
    assert isinstance(pi, PiGpio) and pi.name == "pi" and pi.board_type == "sim"
    assert sensors.name == "sensors" and sensors.board_type == "sim"


def test_two_headers_build_two_peripherals_with_one_tool_set(tmp_path: Path) -> None:
    text = (
        HEADER.format(name="left")
        + DEVICE.format(name="a", pin="GPIO17")
        + HEADER.format(name="right")
        + DEVICE.format(name="b", pin="GPIO17")
    )
    loaded = load_config(write(tmp_path, text))
    left, right = build_peripherals(loaded.config, loaded.source, sim=True)
    assert [t.name for t in right.tools()] == []  # the first carries the shared set
    names = [t.name for t in left.tools()]
    assert names == ["gpio_switch", "gpio_toggle", "gpio_read", "gpio_blink", "hardware_status"]


def test_a_device_name_used_on_two_headers_names_both_places(tmp_path: Path) -> None:
    text = (
        '[hardware]\nboard = "sim"\n[[devices]]\nname = "lamp"\npin = "GPIO4"\nkind = "led"\n'
        + HEADER.format(name="bench")
        + DEVICE.format(name="lamp", pin="GPIO17")
    )
    with pytest.raises(ConfigInvalid) as info:
        load_config(write(tmp_path, text))
    message = str(info.value)
    assert "'lamp' is used twice, at devices[0] and at peripherals[0].devices[0]" in message
    assert info.value.key == "peripherals[0].devices[0].name"


def test_a_peripheral_name_used_twice(tmp_path: Path) -> None:
    text = HEADER.format(name="bench") + HEADER.format(name="bench")
    with pytest.raises(ConfigInvalid, match=r"peripheral name 'bench' is used twice"):
        load_config(write(tmp_path, text))


def test_unknown_type_lists_the_known_ones(tmp_path: Path) -> None:
    text = '[[peripherals]]\nname = "x"\ntype = "i2c_bus"\n'
    with pytest.raises(ConfigInvalid) as info:
        load_config(write(tmp_path, text))
    assert info.value.key == "peripherals[0].type"
    assert "unknown peripheral type 'i2c_bus': use one of nucleo, pi_gpio" in str(info.value)
    assert "clawseed_edge.peripherals" in str(info.value)  # where a plugin registers


@pytest.mark.parametrize(
    ("extra", "key", "why"),
    [
        ('bord = "sim"\n', "peripherals[0].bord", "unknown key 'bord'"),
        ("", "peripherals[0].board", "missing required key 'board'"),
        ('board = "sim"\npin_factory = "gpio"\n', "peripherals[0].pin_factory", "Invalid enum"),
    ],
)
def test_each_factory_validates_its_own_table(
    tmp_path: Path, extra: str, key: str, why: str
) -> None:
    text = '[[peripherals]]\nname = "x"\ntype = "pi_gpio"\n' + extra
    with pytest.raises(ConfigInvalid) as info:
        load_config(write(tmp_path, text))
    assert info.value.key == key and info.value.file == str(tmp_path / "config.toml")
    assert why in str(info.value)


def test_wiring_errors_name_the_peripheral_devices_key(tmp_path: Path) -> None:
    text = HEADER.format(name="bench") + DEVICE.format(name="a", pin="GPIO99")
    loaded = load_config(write(tmp_path, text))
    with pytest.raises(PinInvalid, match=r"peripherals\[0\]\.devices\[0\] \('a'\)"):
        build_peripherals(loaded.config, loaded.source)


def test_the_documented_example_of_two_headers_loads(tmp_path: Path) -> None:
    page = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"
    section = page.read_text(encoding="utf-8").split("### Several boards", 1)[1]
    example = section.split("```toml\n", 1)[1].split("```", 1)[0]
    loaded = load_config(write(tmp_path, example))
    bench, shed = build_peripherals(loaded.config, loaded.source, sim=True)
    assert (bench.name, shed.name) == ("bench", "shed")


async def test_each_peripherals_table_is_validated_once_and_assembly_builds_that_object(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from clawseed_edge.config.assembly import assemble
    from clawseed_edge.peripherals.registry import PeripheralFactoryRegistry, PeripheralTable
    from clawseed_edge.testing import ScriptedProvider

    parsed: list[str] = []
    built: list[PeripheralTable] = []
    parse, create = PeripheralFactoryRegistry.parse, PeripheralTable.create

    def counting_parse(self: Any, table: Any, **kwargs: Any) -> PeripheralTable:
        parsed.append(str(table.get("name")))
        return parse(self, table, **kwargs)

    def recording_create(self: PeripheralTable, **kwargs: Any) -> Any:
        built.append(self)
        return create(self, **kwargs)

    monkeypatch.setattr(PeripheralFactoryRegistry, "parse", counting_parse)
    monkeypatch.setattr(PeripheralTable, "create", recording_create)
    text = (
        '[hardware]\nboard = "sim"\n[[devices]]\nname = "porch"\npin = "GPIO27"\nkind = "led"\n'
        + HEADER.format(name="left")
        + DEVICE.format(name="a", pin="GPIO17")
        + '[[peripherals]]\nname = "bench"\ntype = "nucleo"\nboard = "nucleo-f401re"\n'
        + DEVICE.format(name="ld2", pin="D13")
    )
    loaded = load_config(write(tmp_path, text))
    runtime = await assemble(loaded, provider=ScriptedProvider(["ok"]), sim=True, connect=False)
    async with runtime:
        assert [p.name for p in runtime.peripherals] == ["pi", "left", "bench"]
    assert parsed == ["left", "bench"]  # once each, at load
    assert loaded.peripheral_tables is not None
    assert [id(t) for t in built] == [id(t) for t in loaded.peripheral_tables]

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from clawseed_edge.api import (
    ConfigInvalid,
    HardwareError,
    PinInUse,
    PinInvalid,
    PinModeUnsupported,
    PinReserved,
)
from clawseed_edge.peripherals.boards import default_registry
from clawseed_edge.peripherals.gpio import (
    HardwareConfig,
    load_hardware_toml,
    loads_hardware_toml,
)
from clawseed_edge.peripherals.wired import validate_devices

from ..conftest import WIRING


def _validate(text: str, board: str = "rpi4b") -> list[str]:
    hw = loads_hardware_toml(text, "config.toml")
    wired = validate_devices(default_registry().get(board), hw.devices, "config.toml")
    return [w.pin.name for w in wired]


def _device(name: str, pin: str, kind: str = "led", extra: str = "") -> str:
    return f'[[devices]]\nname = "{name}"\npin = "{pin}"\nkind = "{kind}"\n{extra}\n'


def test_issue_example_validates() -> None:
    assert _validate(WIRING) == ["GPIO17", "GPIO18", "GPIO23", "GPIO27", "GPIO12", "GPIO24"]


def test_reserved_pin_refused_with_reason() -> None:
    with pytest.raises(PinReserved) as err:
        _validate(_device("status_led", "GPIO1"))
    message = str(err.value)
    assert "config.toml" in message and "status_led" in message and "devices[0]" in message
    assert "ID EEPROM" in message


def test_reserved_power_pin_by_header_refused() -> None:
    with pytest.raises(PinReserved, match=r"3.3 V power"):
        _validate(_device("x", "BOARD1"))


def test_unknown_pin_refused() -> None:
    with pytest.raises(PinInvalid) as err:
        _validate(_device("ok", "GPIO17") + _device("ghost", "GPIO42"))
    assert "devices[1] ('ghost')" in str(err.value) and "GPIO42" in str(err.value)


def test_pin_used_twice_refused() -> None:
    # The same pin by two of its names: canonical and header position.
    with pytest.raises(PinInUse) as err:
        _validate(_device("a", "GPIO17") + _device("b", "BOARD11"))
    assert "'b'" in str(err.value) and "already used by device 'a'" in str(err.value)


def test_pwm_on_pin_without_pwm_refused() -> None:
    with pytest.raises(PinModeUnsupported) as err:
        _validate(_device("dimmer", "PC13", "pwm_led"), board="nucleo-f401re")
    message = str(err.value)
    assert "dimmer" in message and "pwm" in message and "PC13" in message
    assert "pins that can: PA0" in message


def test_kind_the_pin_cannot_do(tmp_path: Path) -> None:
    # A board with an input-only pin.
    (tmp_path / "inonly.toml").write_text(
        'id = "inonly"\nname = "x"\nfamily = "pi"\n'
        'pins = [{ name = "GPIO5", number = 5, caps = ["digital_in"] }]\n'
    )
    from clawseed_edge.peripherals.boards import BoardRegistry

    board = BoardRegistry.load(tmp_path).get("inonly")
    hw = loads_hardware_toml(_device("led", "GPIO5"))
    with pytest.raises(PinModeUnsupported, match="needs a pin with digital_out"):
        validate_devices(board, hw.devices)


def test_alias_and_number_accepted() -> None:
    assert _validate(_device("a", "led1") + _device("b", "27", "button"), board="sim") == [
        "GPIO17",
        "GPIO27",
    ]


@pytest.mark.parametrize(
    ("extra", "key"),
    [
        ("max_level = 1.5", "max_level"),
        ("safe = 0.7\nmax_level = 0.5", "safe"),
        ("max_switches_per_minute = 0", "max_switches_per_minute"),
        ("pull_up = true", "pull_up"),
    ],
)
def test_bad_values_name_the_key(extra: str, key: str) -> None:
    with pytest.raises(ConfigInvalid) as err:
        _validate(_device("lamp", "GPIO18", "pwm_led", extra))
    assert f"devices[0].{key}" in str(err.value) and "config.toml" in str(err.value)


def test_bad_name_and_duplicate_name() -> None:
    with pytest.raises(ConfigInvalid, match=r"devices\[0\]\.name"):
        _validate(_device("red led", "GPIO17"))
    with pytest.raises(ConfigInvalid, match="already used by devices\\[0\\]"):
        _validate(_device("x", "GPIO17") + _device("x", "GPIO22"))


def test_input_cannot_have_approval() -> None:
    with pytest.raises(ConfigInvalid, match="input"):
        _validate(_device("b", "GPIO27", "button", "approval = true"))


def test_schema_errors_name_file_and_key() -> None:
    with pytest.raises(ConfigInvalid) as err:
        loads_hardware_toml(_device("x", "GPIO17", "lamp"), "my.toml")
    assert "my.toml: devices[0].kind" in str(err.value) and "pwm_led" in str(err.value)
    with pytest.raises(ConfigInvalid, match=r"my.toml: devices\[0\].colour: unknown key"):
        loads_hardware_toml(_device("x", "GPIO17", extra="colour = 'red'"), "my.toml")
    with pytest.raises(ConfigInvalid, match=r"hardware.pin_factory"):
        loads_hardware_toml('[hardware]\npin_factory = "rpigpio"\n', "my.toml")
    with pytest.raises(ConfigInvalid, match="not valid TOML"):
        loads_hardware_toml("[[devices]\n", "my.toml")


def test_load_file_and_defaults(tmp_path: Path) -> None:
    path = tmp_path / "devices.toml"
    path.write_text('[hardware]\nboard = "rpi5"\n' + _device("a", "GPIO17") + "[other]\nx = 1\n")
    hw = load_hardware_toml(path)
    assert hw.board == "rpi5" and hw.pin_factory == "auto" and hw.devices[0].name == "a"
    assert HardwareConfig().board == "sim"
    with pytest.raises(ConfigInvalid, match="cannot read"):
        load_hardware_toml(tmp_path / "missing.toml")


def test_errors_are_hardware_or_config_errors() -> None:
    # The lead's config layer can catch the whole family.
    for exc in (PinReserved, PinInvalid, PinInUse, PinModeUnsupported):
        assert issubclass(exc, HardwareError) and issubclass(exc, ValueError)


@pytest.mark.parametrize(
    ("kind", "pull", "accepted"),
    [
        ("button", "pull_up = false\n", False),
        ("digital_in", "pull_up = false\n", False),
        ("digital_in", "", False),  # no internal pull asked for; the board's pull-up stays
        ("button", "", True),  # a button's default is the pull-up the pin has anyway
        ("digital_in", "pull_up = true\n", True),
    ],
)
def test_fixed_pull_up_on_gpio2_is_checked_at_load(kind: str, pull: str, accepted: bool) -> None:
    text = f'[[devices]]\nname = "sda_in"\npin = "GPIO2"\nkind = "{kind}"\n{pull}'
    if accepted:
        assert _validate(text) == ["GPIO2"]
        return
    with pytest.raises(ConfigInvalid) as info:
        _validate(text)
    assert info.value.key == "devices[0].pull_up"
    message = str(info.value)
    assert "GPIO2 on rpi4b has a fixed pull-up resistor" in message
    assert "set pull_up = true" in message


async def test_a_button_with_pull_up_unset_uses_the_internal_pull_up(sim_board: Any) -> None:
    # The docs say so ("pull-up by default: pressed = low"); the wiring table agrees.
    board = await sim_board('[[devices]]\nname = "b"\npin = "GPIO5"\nkind = "button"\n')
    assert board.device("b").gpiozero_device.pin.pull == "up"
    assert await board.read("b") == 0  # released: the pull-up holds the line high


async def test_fixed_pull_pins_connect_on_mock_pins(sim_board: Any) -> None:
    # What validation lets through on GPIO2/3 also connects (gpiozero knows the fixed pulls).
    board = await sim_board(
        '[[devices]]\nname = "a"\npin = "GPIO2"\nkind = "button"\n'
        '[[devices]]\nname = "b"\npin = "GPIO3"\nkind = "digital_in"\npull_up = true\n'
    )
    assert board.connected

"""The Nucleo board files against the vendors' data (issue 15, item 5)."""

from __future__ import annotations

import pytest

from clawseed_edge.api import ConfigInvalid
from clawseed_edge.peripherals.boards import BoardRegistry, parse_board, timer_channel

NUCLEOS = ["nucleo-f401re", "nucleo-f411re", "nucleo-g071rb", "nucleo-g0b1re", "nucleo-l476rg"]


@pytest.fixture(scope="module")
def registry() -> BoardRegistry:
    return BoardRegistry.load()


@pytest.mark.parametrize("board_id", ["nucleo-g071rb", "nucleo-g0b1re"])
def test_g0_analog_header_and_fixed_pins(registry: BoardRegistry, board_id: str) -> None:
    board = registry.get(board_id)
    assert [board.lookup(f"A{i}").name for i in range(6)] == [
        "PA0", "PA1", "PA4", "PB1", "PB11", "PB12",
    ]  # fmt: skip
    assert board.lookup("PA4").timer == "TIM14_CH1" and board.lookup("PA4").can("pwm")
    assert board.lookup("PB0").can("adc") and board.lookup("PB0").adc == 8
    headers = {p.name: p.header for p in board.pins}
    assert (headers["PA2"], headers["PA3"], headers["PA14"]) == ("CN10-34", "CN10-6", "CN7-7")
    assert board.mpy_march == "armv6m"


def test_g071rb_has_no_micropython_board_and_g0b1re_does(registry: BoardRegistry) -> None:
    assert registry.get("nucleo-g071rb").micropython_board is None
    assert "no NUCLEO_G071RB" in registry.get("nucleo-g071rb").notes
    assert registry.get("nucleo-g0b1re").micropython_board == "NUCLEO_G0B1RE"
    assert registry.get("nucleo-g0b1re").flash_target == "stm32g0b1retx"


@pytest.mark.parametrize("board_id", NUCLEOS)
def test_every_nucleo_common_facts(registry: BoardRegistry, board_id: str) -> None:
    board = registry.get(board_id)
    pc13 = board.lookup("PC13")
    assert pc13.caps == ("digital_in",), "PC13 (B1, backup domain) is input-only"
    for usb in ("0483:374B", "0483:3752", "0483:3754", "0483:3755", "0483:3757"):
        assert usb in board.usb
    for pin in board.pins:
        assert (pin.adc is not None) == pin.can("adc"), pin.name
        assert (pin.timer is not None) == pin.can("pwm"), pin.name


@pytest.mark.parametrize("board_id", ["nucleo-f401re", "nucleo-f411re"])
def test_f4_d4_and_d9_share_tim3_ch2(registry: BoardRegistry, board_id: str) -> None:
    board = registry.get(board_id)
    assert board.lookup("D4").timer == board.lookup("D9").timer == "TIM3_CH2"
    assert board.lookup("A0").adc == 0 and board.lookup("A4").adc == 11


def test_timer_channel_parses_and_refuses() -> None:
    assert timer_channel("TIM14_CH1") == (14, 1)
    with pytest.raises(ValueError, match="TIM3_CH2"):
        timer_channel("TIM3")


def _mcu(**pin: object) -> dict[str, object]:
    return {
        "id": "x", "name": "x", "family": "mcu", "flash_target": "t",
        "pins": [{"name": "PA0", "caps": ["digital_out", "pwm"], **pin}],
    }  # fmt: skip


def test_mcu_pwm_pin_needs_its_timer_channel() -> None:
    with pytest.raises(ConfigInvalid, match=r"pins\[0\].timer"):
        parse_board(_mcu(), source="x.toml")
    with pytest.raises(ConfigInvalid, match="not a timer channel"):
        parse_board(_mcu(timer="TIMER3"), source="x.toml")
    assert parse_board(_mcu(timer="TIM2_CH1"), source="x.toml").pins[0].timer == "TIM2_CH1"


def test_g0b1re_a4_a5_d1_are_not_analog_under_micropython(registry: BoardRegistry) -> None:
    # MicroPython's NUCLEO_G0B1RE pin table gives PB11, PB12 and PC4 no ADC: machine.ADC
    # refuses them, so the board file must not offer them as analog (issue 21, item 5).
    board = registry.get("nucleo-g0b1re")
    for label, name in (("A4", "PB11"), ("A5", "PB12"), ("D1", "PC4")):
        pin = board.lookup(label)
        assert pin.name == name and not pin.can("adc") and pin.adc is None
        why = pin.why_not("adc")
        assert why is not None and "not analog under MicroPython" in why and name in why
    assert board.lookup("A3").can("adc") and board.lookup("A3").why_not("adc") is None


def test_a_pin_both_capable_and_unavailable_is_refused() -> None:
    raw = {
        "id": "x", "name": "x", "family": "mcu", "flash_target": "t",
        "pins": [{"name": "PA0", "caps": ["digital_in", "adc"], "adc": 0,
                  "unavailable": {"adc": "no ADC under MicroPython"}}],
    }  # fmt: skip
    with pytest.raises(ConfigInvalid, match=r"pins\[0\]\.unavailable.*'adc' in caps"):
        parse_board(raw, source="x.toml")
    raw["pins"][0] = {"name": "PA0", "caps": ["digital_in"], "unavailable": {"dac": "none"}}  # type: ignore[index]
    with pytest.raises(ConfigInvalid, match="unknown capability 'dac'"):
        parse_board(raw, source="x.toml")


def test_g0b1re_firmware_refuses_adc_on_a4_instead_of_failing_inside() -> None:
    # The same firmware and generated pin table a real board runs, over the simulated machine:
    # A4 answers pin_mode (what the board file says), where it answered "internal" on a board.
    import json

    from clawseed_edge.peripherals.serial.sim_machine import SimBoardState, make_machine
    from clawseed_edge.peripherals.serial.virtual import load_firmware

    modules, table = load_firmware("nucleo-g0b1re")
    hw = modules["clawseed_hw"].Hardware(make_machine(SimBoardState(adc={"PA0": 100})))
    core = modules["clawseed_core"].Core(hw, table)
    core.tick(1000)

    def reply(pin: str) -> dict[str, object]:
        line = json.dumps({"id": 1, "op": "adc.read", "args": {"pin": pin}})
        return json.loads(core.handle(line))  # type: ignore[no-any-return]

    for label in ("A4", "A5", "D1"):
        answer = reply(label)
        assert answer["ok"] is False and answer["error"]["code"] == "pin_mode", answer  # type: ignore[index]
    assert reply("A0")["result"] == {"raw": 100, "volts": 0.005}

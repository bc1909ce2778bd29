"""The GPIO tools: schemas, describe_action (what the SecurityPolicy sees) and execute."""

from __future__ import annotations

import re
from typing import Any

import pytest

from clawseed_edge.api import DeviceAction, RiskClass, Tool, ToolContext

from ..conftest import WIRING

CTX = ToolContext(channel="test")
NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


async def _tools(sim_board: Any, wiring: str = WIRING) -> tuple[Any, dict[str, Any]]:
    board = await sim_board(wiring)
    return board, {t.name: t for t in board.tools()}


async def test_tool_set_names_and_risk(sim_board: Any) -> None:
    _, tools = await _tools(sim_board)
    assert set(tools) == {
        "gpio_switch", "gpio_toggle", "gpio_set_level", "gpio_read", "gpio_blink",
        "hardware_status",
    }  # fmt: skip
    for tool in tools.values():
        assert isinstance(tool, Tool)
        assert NAME_RE.match(tool.name)
        spec = tool.spec()
        assert spec.parameters["type"] == "object"
    assert {n for n, t in tools.items() if t.risk is RiskClass.READ} == {
        "gpio_read",
        "hardware_status",
    }
    assert {n for n, t in tools.items() if t.risk is RiskClass.ACT} == {
        "gpio_switch",
        "gpio_toggle",
        "gpio_set_level",
        "gpio_blink",
    }


async def test_schema_enums_list_only_allowed_devices(sim_board: Any) -> None:
    _, tools = await _tools(sim_board)

    def enum(name: str) -> list[str]:
        return list(tools[name].parameters["properties"]["device"]["enum"])

    assert enum("gpio_switch") == ["red_led", "lamp", "fan", "pump"]
    assert enum("gpio_toggle") == ["red_led", "lamp", "fan", "pump"]
    assert enum("gpio_set_level") == ["lamp", "arm"]
    assert enum("gpio_blink") == ["red_led", "lamp", "pump"]  # no relay, no servo
    assert enum("gpio_read") == ["red_led", "lamp", "fan", "doorbell", "arm", "pump"]
    level = tools["gpio_set_level"].parameters["properties"]["level"]
    assert "lamp: 0..0.5" in level["description"] and "arm: -0.8..0.8" in level["description"]


async def test_tools_without_devices_are_left_out(sim_board: Any) -> None:
    board = await sim_board('[[devices]]\nname = "door"\npin = "GPIO5"\nkind = "digital_in"\n')
    assert [t.name for t in board.tools()] == ["gpio_read", "hardware_status"]


async def test_describe_action_switch(sim_board: Any) -> None:
    _, tools = await _tools(sim_board)
    action = tools["gpio_switch"].describe_action({"device": "fan", "on": True})
    assert action == DeviceAction(
        device="fan",
        kind="relay",
        operation="write",
        value=1.0,
        requires_approval=True,
        max_per_minute=6,
        min_value=0.0,
        max_value=1.0,
        allowed=True,
        summary="switch fan (GPIO23) on",
        peripheral="pi",
    )
    off = tools["gpio_switch"].describe_action({"device": "red_led", "on": False})
    assert (off.value, off.requires_approval, off.max_per_minute) == (0.0, False, None)
    capped = tools["gpio_switch"].describe_action({"device": "lamp", "on": True})
    assert (capped.value, capped.max_value) == (0.5, 0.5)  # "on" is the cap


async def test_describe_action_set_level(sim_board: Any) -> None:
    _, tools = await _tools(sim_board)
    action = tools["gpio_set_level"].describe_action({"device": "lamp", "level": 0.8})
    # The tool reports the requested value and the range; the policy denies 0.8 > 0.5.
    assert (action.device, action.kind, action.operation) == ("lamp", "pwm_led", "write")
    assert (action.value, action.min_value, action.max_value) == (0.8, 0.0, 0.5)
    assert action.allowed
    servo = tools["gpio_set_level"].describe_action({"device": "arm", "level": -0.2})
    assert (servo.min_value, servo.max_value) == (-0.8, 0.8)
    bad = tools["gpio_set_level"].describe_action({"device": "lamp", "level": "bright"})
    assert not bad.allowed and "number" in bad.summary


async def test_describe_action_toggle_follows_state(sim_board: Any) -> None:
    board, tools = await _tools(sim_board)
    assert tools["gpio_toggle"].describe_action({"device": "red_led"}).value == 1.0
    await board.switch("red_led", True)
    action = tools["gpio_toggle"].describe_action({"device": "red_led"})
    assert (action.value, action.summary) == (0.0, "toggle red_led (GPIO17) off")


async def test_describe_action_read_blink_status(sim_board: Any) -> None:
    _, tools = await _tools(sim_board)
    read = tools["gpio_read"].describe_action({"device": "fan"})
    assert (read.operation, read.value, read.requires_approval, read.max_per_minute) == (
        "read",
        None,
        False,
        None,
    )
    blink = tools["gpio_blink"].describe_action({"device": "lamp", "count": 2})
    assert (blink.operation, blink.value, blink.max_value) == ("write", 0.5, 0.5)
    assert blink.summary == "blink lamp (GPIO18) 2 times (500 ms on, 500 ms off)"
    assert (blink.peripheral, blink.switches, blink.repeats) == ("pi", 4, 2)  # policy charges 4
    status = tools["hardware_status"].describe_action({})
    assert (status.device, status.kind, status.operation) == ("pi", "board", "read")


@pytest.mark.parametrize(
    ("tool", "arguments", "why"),
    [
        ("gpio_switch", {"device": "blue_led", "on": True}, "no device named 'blue_led'"),
        ("gpio_switch", {"device": "doorbell", "on": True}, "doorbell is a button"),
        ("gpio_switch", {"on": True}, "'device' must be one of"),
        ("gpio_set_level", {"device": "red_led", "level": 0.5}, "red_led is a led"),
        ("gpio_blink", {"device": "fan"}, "fan is a relay"),
        ("gpio_switch", {"device": "fan", "on": "maybe"}, "'on' must be true or false"),
    ],
)
async def test_describe_action_refuses_what_the_tool_cannot_do(
    sim_board: Any, tool: str, arguments: dict[str, Any], why: str
) -> None:
    _, tools = await _tools(sim_board)
    action = tools[tool].describe_action(arguments)
    assert action.allowed is False
    assert why in action.summary
    result = await tools[tool].execute(arguments, CTX)
    assert not result.success and why in (result.error or "")


async def test_execute_switch_drives_the_pin(sim_board: Any, mock_pin_factory: Any) -> None:
    _, tools = await _tools(sim_board)
    result = await tools["gpio_switch"].execute({"device": "red_led", "on": True}, CTX)
    assert result.success and result.output == "red_led (GPIO17) is now on"
    assert mock_pin_factory.pin("GPIO17").state == 1


async def test_execute_pwm_cap_enforced_in_the_tool(sim_board: Any, mock_pin_factory: Any) -> None:
    _, tools = await _tools(sim_board)
    result = await tools["gpio_set_level"].execute({"device": "lamp", "level": 0.9}, CTX)
    assert not result.success
    assert "lamp" in (result.error or "") and "0..0.5" in (result.error or "")
    assert mock_pin_factory.pin("GPIO18").state == 0
    ok = await tools["gpio_set_level"].execute({"device": "lamp", "level": "0.25"}, CTX)
    assert ok.success and mock_pin_factory.pin("GPIO18").state == pytest.approx(0.25)


async def test_execute_read_toggle_blink_status(sim_board: Any) -> None:
    board, tools = await _tools(sim_board)
    read = await tools["gpio_read"].execute({"device": "doorbell"}, CTX)
    assert read.success and read.output == "doorbell (GPIO27) is released"
    toggled = await tools["gpio_toggle"].execute({"device": "fan"}, CTX)
    assert toggled.output == "fan (GPIO23) is now on"
    blink = await tools["gpio_blink"].execute(
        {"device": "red_led", "count": 2, "on_ms": 20, "off_ms": 20}, CTX
    )
    assert blink.success and "blinking 2 times" in blink.output
    bad = await tools["gpio_blink"].execute({"device": "red_led", "count": 2.5}, CTX)
    assert not bad.success and "whole number" in (bad.error or "")
    status = await tools["hardware_status"].execute({}, CTX)
    assert status.success
    assert "fan: relay on GPIO23, on" in status.output
    assert "doorbell: button on GPIO27, released" in status.output
    task = board.blinking("red_led")
    if task is not None:
        await task


async def test_blink_bounds_visible_to_the_policy(sim_board: Any) -> None:
    _, tools = await _tools(sim_board)
    action = tools["gpio_blink"].describe_action({"device": "red_led", "count": 500})
    assert not action.allowed and "count 500 is outside 1..20" in action.summary
    result = await tools["gpio_blink"].execute({"device": "red_led", "count": 500}, CTX)
    assert not result.success and "1..20" in (result.error or "")


LEFT = '[[devices]]\nname = "left_led"\npin = "GPIO17"\nkind = "led"\n'
RIGHT = (
    '[[devices]]\nname = "right_led"\npin = "GPIO17"\nkind = "led"\nmax_switches_per_minute = 3\n'
    '[[devices]]\nname = "right_servo"\npin = "GPIO12"\nkind = "servo"\n'
)


async def test_one_tool_set_routes_by_device_across_boards() -> None:
    from clawseed_edge.peripherals import share_gpio_tools
    from clawseed_edge.testing.hardware import wired_sim_board

    left = wired_sim_board(LEFT, name="left")
    right = wired_sim_board(RIGHT, name="right")
    async with left, right:
        shared = share_gpio_tools([left, right])
        assert list(left.tools()) == shared and list(right.tools()) == []
        tools = {t.name: t for t in shared}
        assert tools["gpio_switch"].parameters["properties"]["device"]["enum"] == [
            "left_led",
            "right_led",
        ]
        assert tools["gpio_set_level"].devices == ["right_servo"]

        result = await tools["gpio_switch"].execute({"device": "right_led", "on": True}, CTX)
        assert result.success
        assert right.pin_factory.pin("GPIO17").state == 1
        assert left.pin_factory.pin("GPIO17").state == 0  # the other board's GPIO17 untouched

        action = tools["gpio_blink"].describe_action({"device": "right_led", "count": 2})
        assert (action.peripheral, action.device, action.max_per_minute) == (
            "right",
            "right_led",
            3,
        )
        status = await tools["hardware_status"].execute({}, CTX)
        assert "left_led: led on GPIO17 (left), off" in status.output
        assert "right_led: led on GPIO17 (right), on" in status.output


async def test_a_device_name_on_two_boards_is_refused() -> None:
    from clawseed_edge.api import ConfigInvalid
    from clawseed_edge.peripherals import share_gpio_tools
    from clawseed_edge.testing.hardware import wired_sim_board

    left = wired_sim_board(LEFT, name="left")
    again = wired_sim_board(LEFT, name="again")
    with pytest.raises(
        ConfigInvalid, match=r"'left_led' is used by peripherals 'left' and 'again'"
    ):
        share_gpio_tools([left, again])

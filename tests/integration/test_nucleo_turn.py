"""A full agent turn on a Nucleo: the config names the board, --sim attaches a virtual board
running the real firmware over a pty, and the model's gpio_switch lights LD2 (PA5)."""

from __future__ import annotations

from pathlib import Path

import pytest

from clawseed_edge.api import PinReserved, ToolCall
from clawseed_edge.config.assembly import assemble
from clawseed_edge.config.file import load_config
from clawseed_edge.testing import ScriptedProvider

NUCLEO_AND_PI = """
[agent]
local_intents = false  # the scripted model is what these turns test
[autonomy]
level = "full"

[[peripherals]]
name = "bench"
type = "nucleo"
board = "nucleo-f401re"
port = "/dev/ttyACM9"    # never opened: --sim attaches a virtual board instead

[[peripherals.devices]]
name = "ld2"
pin = "D13"
kind = "led"
description = "the green user LED"

[[peripherals.devices]]
name = "b1"
pin = "user_button"
kind = "button"
on_press = "the blue button was pressed"

[[peripherals]]
name = "pi"
type = "pi_gpio"
board = "sim"

[[peripherals.devices]]
name = "porch_light"
pin = "GPIO27"
kind = "led"
"""


async def test_chat_lights_ld2_on_the_virtual_nucleo(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(NUCLEO_AND_PI, encoding="utf-8")
    provider = ScriptedProvider(
        [
            ScriptedProvider.calls(ToolCall("gpio_switch", {"device": "ld2", "on": True})),
            "LD2 is on.",
        ]
    )
    runtime = await assemble(load_config(path), provider=provider, sim=True)
    async with runtime:
        nucleo, _pi = runtime.peripherals
        assert nucleo.board_type == "nucleo-f401re" and nucleo.virtual is not None
        switch = runtime.agent.registry.get("gpio_switch")
        assert switch is not None
        assert switch.parameters["properties"]["device"]["enum"] == ["ld2", "porch_light"]
        assert "nucleo-f401re" in nucleo.describe() and "ld2" in nucleo.describe()

        assert await runtime.agent.run("turn on the green LED on the bench board") == "LD2 is on."

        state = nucleo.virtual.state
        assert state.level("PA5") == 1 and state.history[-1] == ("PA5", 1)
        tool_result = provider.requests[1].messages[-1]
        assert tool_result.role == "tool" and "ld2 (PA5) is now on" in str(tool_result.content)

        provider.add(ScriptedProvider.call("hardware_status"), "Done.")
        await runtime.agent.run("status?")
        status = str(provider.requests[-1].messages[-1].content)
        assert "ld2: led on PA5 (bench), on" in status and "b1: button on PC13" in status
        virtual = nucleo.virtual
    assert virtual.state.level("PA5") == 0  # disconnect applied the safe state on the board


async def test_a_reserved_pin_is_refused_by_the_host_at_load(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(NUCLEO_AND_PI.replace('pin = "D13"', 'pin = "PA13"'), encoding="utf-8")
    with pytest.raises(PinReserved, match="SWDIO"):
        await assemble(load_config(path), provider=ScriptedProvider([]), sim=True)

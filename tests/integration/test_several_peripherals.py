"""Two simulated Pi headers in one agent, each switched by chat through the real engine."""

from __future__ import annotations

from pathlib import Path

from clawseed_edge.api import ToolCall
from clawseed_edge.config.assembly import assemble
from clawseed_edge.config.file import load_config
from clawseed_edge.testing import ScriptedProvider

TWO_HEADERS = """
[autonomy]
level = "full"

[hardware]
board = "sim"

[[devices]]
name = "porch_light"
pin = "GPIO27"
kind = "led"

[[peripherals]]
name = "bench"
type = "pi_gpio"
board = "sim"

[[peripherals.devices]]
name = "bench_led"
pin = "GPIO17"
kind = "led"

[[peripherals]]
name = "shed"
type = "pi_gpio"
board = "sim"
pin_factory = "mock"

[[peripherals.devices]]
name = "shed_fan"
pin = "GPIO17"
kind = "relay"
active_high = false
max_switches_per_minute = 1
"""


async def test_two_headers_each_switched_by_chat(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(TWO_HEADERS, encoding="utf-8")
    calls = [
        ToolCall("gpio_switch", {"device": "bench_led", "on": True}),
        ToolCall("gpio_switch", {"device": "shed_fan", "on": True}),
        ToolCall("gpio_switch", {"device": "porch_light", "on": True}),
    ]
    provider = ScriptedProvider([ScriptedProvider.calls(*calls), "All three on."])
    runtime = await assemble(load_config(path), provider=provider, sim=True)
    async with runtime:
        pi, bench, shed = runtime.peripherals
        assert [p.name for p in runtime.peripherals] == ["pi", "bench", "shed"]
        # One tool set for all three headers: each name registered once, every device listed.
        switch = runtime.agent.registry.get("gpio_switch")
        assert switch is not None
        enum = switch.parameters["properties"]["device"]["enum"]
        assert enum == ["porch_light", "bench_led", "shed_fan"]

        assert await runtime.agent.run("switch everything on") == "All three on."

        # Each header has its own MockFactory: the same GPIO17 is two different pins.
        assert bench.pin_factory.pin("GPIO17").state == 1  # led on = high
        assert shed.pin_factory.pin("GPIO17").state == 0  # active-low relay on = low
        assert pi.pin_factory.pin("GPIO27").state == 1
        assert bench.pin_factory is not shed.pin_factory

        # The switch limit is the policy's, per peripheral and device.
        provider.add(ScriptedProvider.call("gpio_switch", device="shed_fan", on=False), "No.")
        await runtime.agent.run("fan off")
        assert shed.pin_factory.pin("GPIO17").state == 0  # refused: still on
        status = runtime.agent.registry.get("hardware_status")
        assert status is not None
        action = status.describe_action({})  # type: ignore[attr-defined]
        assert action.device == "pi, bench, shed"
    assert not bench.connected and not shed.connected  # both disconnected with the agent
